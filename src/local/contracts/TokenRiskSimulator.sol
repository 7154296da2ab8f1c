// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
// A v2-style pool: Uniswap v2's pair and the pools of its forks (token0, getReserves, swap).
import {IUniswapV2Pair as ISimV2Pool} from "@uniswap/v2-core/contracts/interfaces/IUniswapV2Pair.sol";
// The swap of a concentrated-liquidity pool: Uniswap v3's UniswapV3Pool.swap (v3-core,
// IUniswapV3PoolActions) and Aerodrome Slipstream's CLPool.swap (aerodrome-finance/slipstream,
// contracts/core/CLPool.sol) have the same signature; both send the output first, then call
// `uniswapV3SwapCallback(amount0Delta, amount1Delta, data)` on the caller (Slipstream through
// `ICLSwapCallback(msg.sender).uniswapV3SwapCallback`, which keeps v3's name) and then require
// that their balance of the input grew by what they asked ("IIA").
import {IUniswapV3Pool as ISimCLPool} from "@uniswap/v3-core/contracts/interfaces/IUniswapV3Pool.sol";

interface ISimQuotingPool {
    function getAmountOut(uint256 amountIn, address tokenIn) external view returns (uint256);
}

/// @title TokenRiskSimulator
/// @notice Never deployed: the honeypot check places this code at a throwaway address with an
/// `eth_call` state override, funds it with the quote token, and calls `simulate`. In one call,
/// nothing of which is ever mined, it buys the token through a pool (v2-style or concentrated
/// liquidity), sends half of what it got to a fresh address, and sells the rest back; every
/// step's amounts and revert data come back, so the caller computes the taxes and sees why a step
/// failed.
contract TokenRiskSimulator {
    /// How the pool trades: a v2 pair priced here by the constant product with `feeBps`, a v2-style
    /// pool that prices its own swaps (Aerodrome's `getAmountOut`), or a concentrated-liquidity pool.
    uint8 internal constant MODE_V2 = 0;
    uint8 internal constant MODE_V2_POOL_QUOTES = 1;
    uint8 internal constant MODE_CL = 2;
    /// v3's TickMath.MIN_SQRT_RATIO + 1 and MAX_SQRT_RATIO - 1: no price limit.
    uint160 internal constant NO_LIMIT_DOWN = 4295128740;
    uint160 internal constant NO_LIMIT_UP = 1461446703485210103287273052203988822378723970341;

    /// The concentrated-liquidity pool whose swap callback is expected, set only during its swap.
    address private swapping;

    /// A concentrated-liquidity pool was paid less than it asked for: the token keeps a fee on
    /// transfers into the pool (the pool itself would revert with "IIA").
    error ShortPaid(uint256 owed, uint256 arrived);

    struct Result {
        bool buyOk;
        bytes buyError;
        uint256 buyExpected;
        uint256 bought;
        bool transferOk;
        bytes transferError;
        uint256 transferSent;
        uint256 transferReceived;
        bool sellOk;
        bytes sellError;
        uint256 sellSent;
        uint256 sellArrived;
        uint256 sellExpected;
        uint256 sellReceived;
    }

    /// @param feeBps the pool's fee for the constant-product formula; used by MODE_V2 only.
    /// @param mode MODE_V2, MODE_V2_POOL_QUOTES or MODE_CL.
    function simulate(address pool, address token, address quote, uint256 quoteIn, address fresh, uint256 feeBps, uint8 mode)
        external
        returns (Result memory r)
    {
        try this.buy(pool, token, quote, quoteIn, feeBps, mode) returns (uint256 expected, uint256 bought) {
            r.buyOk = true;
            r.buyExpected = expected;
            r.bought = bought;
        } catch (bytes memory reason) {
            r.buyError = reason;
            return r;
        }
        if (r.bought == 0) return r;
        r.transferSent = r.bought / 2;
        try this.send(token, fresh, r.transferSent) returns (uint256 received) {
            r.transferOk = true;
            r.transferReceived = received;
        } catch (bytes memory reason) {
            r.transferError = reason;
        }
        r.sellSent = IERC20(token).balanceOf(address(this));
        try this.sell(pool, token, quote, r.sellSent, feeBps, mode) returns (
            uint256 sent, uint256 arrived, uint256 expected, uint256 received
        ) {
            r.sellOk = true;
            r.sellSent = sent;
            r.sellArrived = arrived;
            r.sellExpected = expected;
            r.sellReceived = received;
        } catch (bytes memory reason) {
            r.sellError = reason;
        }
    }

    function buy(address pool, address token, address quote, uint256 quoteIn, uint256 feeBps, uint8 mode)
        external
        returns (uint256 expected, uint256 bought)
    {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        if (mode == MODE_CL) {
            uint256 tokenBefore = IERC20(token).balanceOf(address(this));
            // The pool's own statement of what it sent: its swap's output delta.
            (, expected) = _swapCL(pool, quote, quoteIn);
            bought = IERC20(token).balanceOf(address(this)) - tokenBefore;
            return (expected, bought);
        }
        bool poolQuotes = mode == MODE_V2_POOL_QUOTES;
        (uint256 rQuote, uint256 rToken, bool quoteIs0) = _reserves(pool, quote);
        expected = poolQuotes ? ISimQuotingPool(pool).getAmountOut(quoteIn, quote) : _amountOut(quoteIn, rQuote, rToken, feeBps);
        uint256 before = IERC20(token).balanceOf(address(this));
        _transfer(quote, pool, quoteIn);
        ISimV2Pool(pool).swap(quoteIs0 ? 0 : expected, quoteIs0 ? expected : 0, address(this), "");
        bought = IERC20(token).balanceOf(address(this)) - before;
    }

    function send(address token, address to, uint256 amount) external returns (uint256 received) {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        uint256 before = IERC20(token).balanceOf(to);
        _transfer(token, to, amount);
        received = IERC20(token).balanceOf(to) - before;
    }

    function sell(address pool, address token, address quote, uint256 amount, uint256 feeBps, uint8 mode)
        external
        returns (uint256 sent, uint256 arrived, uint256 expected, uint256 received)
    {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        uint256 poolBefore = IERC20(token).balanceOf(pool);
        if (mode == MODE_CL) {
            uint256 quoteBefore = IERC20(quote).balanceOf(address(this));
            (sent, expected) = _swapCL(pool, token, amount);
            arrived = IERC20(token).balanceOf(pool) - poolBefore;
            received = IERC20(quote).balanceOf(address(this)) - quoteBefore;
            return (sent, arrived, expected, received);
        }
        sent = amount;
        _transfer(token, pool, amount);
        arrived = IERC20(token).balanceOf(pool) - poolBefore;
        (expected, received) = _swapIn(pool, token, quote, feeBps, mode == MODE_V2_POOL_QUOTES);
    }

    /// @dev An exact-input swap of `amountIn` of `tokenIn` on a concentrated-liquidity pool, with no
    /// price limit; returns what the pool took and what it says it sent out.
    function _swapCL(address pool, address tokenIn, uint256 amountIn) private returns (uint256 paid, uint256 out) {
        bool zeroForOne = ISimCLPool(pool).token0() == tokenIn;
        swapping = pool;
        (int256 amount0, int256 amount1) =
            ISimCLPool(pool).swap(address(this), zeroForOne, int256(amountIn), zeroForOne ? NO_LIMIT_DOWN : NO_LIMIT_UP, abi.encode(tokenIn));
        swapping = address(0);
        (int256 taken, int256 given) = zeroForOne ? (amount0, amount1) : (amount1, amount0);
        paid = uint256(taken);
        out = uint256(-given);
    }

    /// @notice The pool's request for its input, as a router answers it: pay exactly what it asked.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        require(msg.sender == swapping && swapping != address(0), "TokenRiskSimulator: unexpected callback");
        address tokenIn = abi.decode(data, (address));
        uint256 owed = uint256(amount0Delta > 0 ? amount0Delta : amount1Delta);
        uint256 before = IERC20(tokenIn).balanceOf(msg.sender);
        _transfer(tokenIn, msg.sender, owed);
        uint256 arrived = IERC20(tokenIn).balanceOf(msg.sender) - before;
        if (arrived < owed) revert ShortPaid(owed, arrived);
    }

    /// @dev Swap what the pool holds of `token` beyond its reserve for `quote`, as a v2 pair prices it.
    function _swapIn(address pool, address token, address quote, uint256 feeBps, bool poolQuotes)
        private
        returns (uint256 expected, uint256 received)
    {
        (uint256 rQuote, uint256 rToken, bool quoteIs0) = _reserves(pool, quote);
        uint256 input = IERC20(token).balanceOf(pool) - rToken;
        expected = poolQuotes ? ISimQuotingPool(pool).getAmountOut(input, token) : _amountOut(input, rToken, rQuote, feeBps);
        uint256 before = IERC20(quote).balanceOf(address(this));
        ISimV2Pool(pool).swap(quoteIs0 ? expected : 0, quoteIs0 ? 0 : expected, address(this), "");
        received = IERC20(quote).balanceOf(address(this)) - before;
    }

    function _reserves(address pool, address quote) private view returns (uint256 rQuote, uint256 rToken, bool quoteIs0) {
        (uint112 r0, uint112 r1,) = ISimV2Pool(pool).getReserves();
        quoteIs0 = ISimV2Pool(pool).token0() == quote;
        (rQuote, rToken) = quoteIs0 ? (uint256(r0), uint256(r1)) : (uint256(r1), uint256(r0));
    }

    function _amountOut(uint256 amountIn, uint256 reserveIn, uint256 reserveOut, uint256 feeBps) private pure returns (uint256) {
        uint256 inWithFee = amountIn * (10_000 - feeBps);
        return (inWithFee * reserveOut) / (reserveIn * 10_000 + inWithFee);
    }

    /// @dev Tokens that return nothing from `transfer` (USDT-style) are accepted, as SafeERC20 does.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeCall(IERC20.transfer, (to, amount)));
        if (!ok) {
            assembly {
                revert(add(data, 32), mload(data))
            }
        }
        require(data.length == 0 || abi.decode(data, (bool)), "TokenRiskSimulator: transfer returned false");
    }
}
