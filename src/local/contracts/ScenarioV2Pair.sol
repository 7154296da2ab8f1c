// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title ScenarioV2Pair
/// @notice A Uniswap-v2-style constant-product pair, deployed directly by the seeded scenario or
/// created by RiskV2Factory: reserves synced from balances (`sync` after liquidity was
/// transferred in), `mint` and `burn` of liquidity with v2's Mint/Burn/Sync/Swap events,
/// `getReserves`/`token0`/`token1`/`factory`, and a `swap` with the 0.3% fee invariant. Liquidity
/// shares are kept in `liquidityOf` rather than an ERC-20 (no LP Transfer logs), which is all the
/// seeded scenario needs.
contract ScenarioV2Pair {
    uint256 private constant MINIMUM_LIQUIDITY = 1000;

    address public immutable factory;
    address public immutable token0;
    address public immutable token1;
    uint256 public totalSupply;
    mapping(address => uint256) public liquidityOf;

    uint112 private _reserve0;
    uint112 private _reserve1;
    uint32 private _blockTimestampLast;

    event Mint(address indexed sender, uint256 amount0, uint256 amount1);
    event Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to);
    event Swap(
        address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to
    );
    event Sync(uint112 reserve0, uint112 reserve1);

    constructor(address tokenA, address tokenB) {
        factory = msg.sender;
        (token0, token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
    }

    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) {
        return (_reserve0, _reserve1, _blockTimestampLast);
    }

    /// @notice Credit `to` with liquidity for the tokens transferred in since the last update.
    function mint(address to) external returns (uint256 liquidity) {
        uint256 b0 = IERC20(token0).balanceOf(address(this));
        uint256 b1 = IERC20(token1).balanceOf(address(this));
        uint256 a0 = b0 - _reserve0;
        uint256 a1 = b1 - _reserve1;
        if (totalSupply == 0) {
            liquidity = _sqrt(a0 * a1) - MINIMUM_LIQUIDITY;
            totalSupply = MINIMUM_LIQUIDITY; // locked forever, as in Uniswap v2
        } else {
            uint256 l0 = (a0 * totalSupply) / _reserve0;
            uint256 l1 = (a1 * totalSupply) / _reserve1;
            liquidity = l0 < l1 ? l0 : l1;
        }
        require(liquidity > 0, "ScenarioV2Pair: no liquidity minted");
        liquidityOf[to] += liquidity;
        totalSupply += liquidity;
        _update(b0, b1);
        emit Mint(msg.sender, a0, a1);
    }

    /// @notice Withdraw `liquidity` of the caller's share to `to`, both tokens pro rata.
    function burn(uint256 liquidity, address to) external returns (uint256 amount0, uint256 amount1) {
        liquidityOf[msg.sender] -= liquidity;
        uint256 b0 = IERC20(token0).balanceOf(address(this));
        uint256 b1 = IERC20(token1).balanceOf(address(this));
        amount0 = (liquidity * b0) / totalSupply;
        amount1 = (liquidity * b1) / totalSupply;
        totalSupply -= liquidity;
        require(IERC20(token0).transfer(to, amount0), "ScenarioV2Pair: transfer0");
        require(IERC20(token1).transfer(to, amount1), "ScenarioV2Pair: transfer1");
        _update(IERC20(token0).balanceOf(address(this)), IERC20(token1).balanceOf(address(this)));
        emit Burn(msg.sender, amount0, amount1, to);
    }

    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata) external {
        require(amount0Out > 0 || amount1Out > 0, "ScenarioV2Pair: no output");
        (uint112 r0, uint112 r1) = (_reserve0, _reserve1);
        require(amount0Out < r0 && amount1Out < r1, "ScenarioV2Pair: liquidity");
        if (amount0Out > 0) require(IERC20(token0).transfer(to, amount0Out), "ScenarioV2Pair: transfer0");
        if (amount1Out > 0) require(IERC20(token1).transfer(to, amount1Out), "ScenarioV2Pair: transfer1");
        uint256 b0 = IERC20(token0).balanceOf(address(this));
        uint256 b1 = IERC20(token1).balanceOf(address(this));
        uint256 in0 = b0 > r0 - amount0Out ? b0 - (r0 - amount0Out) : 0;
        uint256 in1 = b1 > r1 - amount1Out ? b1 - (r1 - amount1Out) : 0;
        require(in0 > 0 || in1 > 0, "ScenarioV2Pair: no input");
        require((b0 * 1000 - in0 * 3) * (b1 * 1000 - in1 * 3) >= uint256(r0) * r1 * 1_000_000, "ScenarioV2Pair: K");
        _update(b0, b1);
        emit Swap(msg.sender, in0, in1, amount0Out, amount1Out, to);
    }

    function sync() external {
        _update(IERC20(token0).balanceOf(address(this)), IERC20(token1).balanceOf(address(this)));
    }

    function _update(uint256 b0, uint256 b1) private {
        require(b0 <= type(uint112).max && b1 <= type(uint112).max, "ScenarioV2Pair: overflow");
        _reserve0 = uint112(b0);
        _reserve1 = uint112(b1);
        _blockTimestampLast = uint32(block.timestamp);
        emit Sync(_reserve0, _reserve1);
    }

    function _sqrt(uint256 y) private pure returns (uint256 z) {
        if (y > 3) {
            z = y;
            uint256 x = y / 2 + 1;
            while (x < z) {
                z = x;
                x = (y / x + x) / 2;
            }
        } else if (y != 0) {
            z = 1;
        }
    }
}
