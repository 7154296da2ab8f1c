// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ScenarioV3Pool} from "./ScenarioV3Pool.sol";

/// The callback every Uniswap v3 pool makes to its caller (v3-core IUniswapV3SwapCallback);
/// Aerodrome Slipstream's CLPool calls the same name through its ICLSwapCallback.
interface IRiskV3SwapCallback {
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external;
}

/// @title RiskV3Pool
/// @notice A working concentrated-liquidity pool of the seeded token-risk scenario with one
/// position over the whole price range, so its liquidity L is the same at every price. `swap`
/// has Uniswap v3's interface and order of events: it moves the price along the curve
/// (sqrtPriceX96 in Q64.96, exact-input swaps with v3's rounding: SqrtPriceMath and SwapMath),
/// sends the output to the recipient, calls `uniswapV3SwapCallback` on the caller and checks that
/// its balance of the input token grew by what it asked ("IIA"). Simplifications, none visible to
/// a trader: one full-range position (no ticks are crossed), exact output is refused, no protocol
/// fee, no oracle, and `slot0.tick` is the creation tick (nothing reads it here). Liquidity is
/// added v2-style (tokens in first, then `mint`) so the scenario's externally owned deployer can
/// add it without a callback.
contract RiskV3Pool is ScenarioV3Pool {
    /// One swap step's outcome (SwapMath.computeSwapStep's return values).
    struct Step {
        uint160 next;
        uint256 amountIn;
        uint256 amountOut;
        uint256 feeAmount;
    }

    /// v3's price bounds (TickMath.MIN_SQRT_RATIO and MAX_SQRT_RATIO).
    uint160 internal constant MIN_SQRT_RATIO = 4295128739;
    uint160 internal constant MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342;
    int24 internal constant MIN_TICK = -887272;
    int24 internal constant MAX_TICK = 887272;
    uint256 internal constant Q96 = 1 << 96;

    int24 public immutable tickSpacing;
    /// What the pool owes its position (principal and fees): a mint is paid by what is above it.
    uint256 internal accounted0;
    uint256 internal accounted1;

    event Mint(
        address sender,
        address indexed owner,
        int24 indexed tickLower,
        int24 indexed tickUpper,
        uint128 amount,
        uint256 amount0,
        uint256 amount1
    );
    event Swap(
        address indexed sender,
        address indexed recipient,
        int256 amount0,
        int256 amount1,
        uint160 sqrtPriceX96,
        uint128 liquidity,
        int24 tick
    );

    /// Liquidity starts at zero: it comes from `mint`.
    constructor(address tokenA, address tokenB, uint24 fee_, int24 tickSpacing_, uint160 sqrtPriceX96, int24 tick)
        ScenarioV3Pool(tokenA, tokenB, fee_, sqrtPriceX96, tick, 0)
    {
        require(sqrtPriceX96 > MIN_SQRT_RATIO && sqrtPriceX96 < MAX_SQRT_RATIO, "R");
        tickSpacing = tickSpacing_;
    }

    function _balance(address token) private view returns (uint256) {
        return IERC20(token).balanceOf(address(this));
    }

    /// @notice Add `amount` of full-range liquidity for `owner`, paid by tokens sent to the pool first.
    function mint(address owner, uint128 amount) external returns (uint256 amount0, uint256 amount1) {
        require(amount > 0, "L");
        uint160 price = slot0.sqrtPriceX96;
        // A position from price 0 to infinity holds L / sqrtP of token0 and L * sqrtP of token1.
        amount0 = Math.mulDiv(uint256(amount) << 96, 1, price, Math.Rounding.Ceil);
        amount1 = Math.mulDiv(amount, price, Q96, Math.Rounding.Ceil);
        require(_balance(token0) >= accounted0 + amount0, "M0");
        require(_balance(token1) >= accounted1 + amount1, "M1");
        accounted0 += amount0;
        accounted1 += amount1;
        liquidity += amount;
        emit Mint(msg.sender, owner, MIN_TICK, MAX_TICK, amount, amount0, amount1);
    }

    /// @notice Uniswap v3's swap, exact input only (`amountSpecified` > 0).
    function swap(address recipient, bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96, bytes calldata data)
        external
        returns (int256 amount0, int256 amount1)
    {
        require(amountSpecified != 0, "AS");
        require(amountSpecified > 0, "RiskV3Pool: exact output is not supported");
        Step memory step = _step(_lock(zeroForOne, sqrtPriceLimitX96), sqrtPriceLimitX96, uint256(amountSpecified), zeroForOne);
        slot0.sqrtPriceX96 = step.next;
        (amount0, amount1) = _settle(recipient, zeroForOne, step.amountIn + step.feeAmount, step.amountOut, data);
        emit Swap(msg.sender, recipient, amount0, amount1, step.next, liquidity, slot0.tick);
        slot0.unlocked = true;
    }

    /// @dev Check the price limit against the price and lock the pool; returns the price.
    function _lock(bool zeroForOne, uint160 sqrtPriceLimitX96) private returns (uint160 price) {
        require(slot0.unlocked, "LOK");
        price = slot0.sqrtPriceX96;
        require(
            zeroForOne
                ? sqrtPriceLimitX96 < price && sqrtPriceLimitX96 > MIN_SQRT_RATIO
                : sqrtPriceLimitX96 > price && sqrtPriceLimitX96 < MAX_SQRT_RATIO,
            "SPL"
        );
        slot0.unlocked = false;
    }

    /// @dev Send the output, call back for the input and check it arrived, as UniswapV3Pool.swap does.
    function _settle(address recipient, bool zeroForOne, uint256 paid, uint256 amountOut, bytes calldata data)
        private
        returns (int256 amount0, int256 amount1)
    {
        (address tokenIn, address tokenOut) = zeroForOne ? (token0, token1) : (token1, token0);
        (amount0, amount1) = zeroForOne ? (int256(paid), -int256(amountOut)) : (-int256(amountOut), int256(paid));
        if (zeroForOne) {
            accounted0 += paid;
            accounted1 -= amountOut;
        } else {
            accounted1 += paid;
            accounted0 -= amountOut;
        }
        if (amountOut > 0) _transfer(tokenOut, recipient, amountOut);
        uint256 before = _balance(tokenIn);
        IRiskV3SwapCallback(msg.sender).uniswapV3SwapCallback(amount0, amount1, data);
        require(before + paid <= _balance(tokenIn), "IIA");
    }

    /// @dev One SwapMath.computeSwapStep with the price limit as the target: the whole input
    /// (less the fee) is swapped unless the limit is reached first.
    function _step(uint160 price, uint160 limit, uint256 amountRemaining, bool zeroForOne) private view returns (Step memory step) {
        uint128 L = liquidity;
        require(L > 0, "RiskV3Pool: no liquidity");
        uint256 lessFee = Math.mulDiv(amountRemaining, 1e6 - fee, 1e6);
        uint256 toLimit = zeroForOne ? _amount0Delta(limit, price, L, true) : _amount1Delta(price, limit, L, true);
        if (lessFee >= toLimit) {
            step.next = limit;
            step.amountIn = toLimit;
            step.feeAmount = Math.mulDiv(toLimit, fee, 1e6 - fee, Math.Rounding.Ceil);
        } else {
            step.amountIn = lessFee;
            step.next = zeroForOne ? _nextFromAmount0(price, L, lessFee) : _nextFromAmount1(price, L, lessFee);
            step.feeAmount = amountRemaining - lessFee;
        }
        step.amountOut = zeroForOne ? _amount1Delta(step.next, price, L, false) : _amount0Delta(price, step.next, L, false);
    }

    /// @dev SqrtPriceMath.getNextSqrtPriceFromAmount0RoundingUp, adding token0.
    function _nextFromAmount0(uint160 price, uint128 L, uint256 amount) private pure returns (uint160) {
        uint256 numerator = uint256(L) << 96;
        return uint160(Math.mulDiv(numerator, price, numerator + amount * price, Math.Rounding.Ceil));
    }

    /// @dev SqrtPriceMath.getNextSqrtPriceFromAmount1RoundingDown, adding token1.
    function _nextFromAmount1(uint160 price, uint128 L, uint256 amount) private pure returns (uint160) {
        return uint160(uint256(price) + Math.mulDiv(amount, Q96, L));
    }

    /// @dev SqrtPriceMath.getAmount0Delta between prices a < b.
    function _amount0Delta(uint160 a, uint160 b, uint128 L, bool roundUp) private pure returns (uint256) {
        uint256 numerator = uint256(L) << 96;
        return roundUp
            ? Math.ceilDiv(Math.mulDiv(numerator, b - a, b, Math.Rounding.Ceil), a)
            : Math.mulDiv(numerator, b - a, b) / a;
    }

    /// @dev SqrtPriceMath.getAmount1Delta between prices a < b.
    function _amount1Delta(uint160 a, uint160 b, uint128 L, bool roundUp) private pure returns (uint256) {
        return Math.mulDiv(L, b - a, Q96, roundUp ? Math.Rounding.Ceil : Math.Rounding.Floor);
    }

    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IERC20.transfer, (to, amount)));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "TF");
    }
}
