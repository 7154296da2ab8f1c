// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IScenarioERC20 {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
}

/// @title ScenarioV2Pair
/// @notice A Uniswap-v2-style constant-product pair: real token balances, reserves synced from
/// them, `getReserves`/`token0`/`token1`/`factory` and a `swap` with the 0.3% fee invariant.
/// No LP token: the scenario only needs a pool that holds reserves and trades.
contract ScenarioV2Pair {
    address public immutable factory;
    address public immutable token0;
    address public immutable token1;

    uint112 private _reserve0;
    uint112 private _reserve1;
    uint32 private _blockTimestampLast;

    event Sync(uint112 reserve0, uint112 reserve1);
    event Swap(
        address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to
    );

    constructor(address tokenA, address tokenB) {
        factory = msg.sender;
        (token0, token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
    }

    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) {
        return (_reserve0, _reserve1, _blockTimestampLast);
    }

    /// @notice Make the reserves match the balances (after liquidity was transferred in).
    function sync() external {
        _update(IScenarioERC20(token0).balanceOf(address(this)), IScenarioERC20(token1).balanceOf(address(this)));
    }

    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata) external {
        require(amount0Out > 0 || amount1Out > 0, "ScenarioV2Pair: no output");
        (uint112 r0, uint112 r1) = (_reserve0, _reserve1);
        require(amount0Out < r0 && amount1Out < r1, "ScenarioV2Pair: liquidity");
        if (amount0Out > 0) require(IScenarioERC20(token0).transfer(to, amount0Out), "ScenarioV2Pair: transfer0");
        if (amount1Out > 0) require(IScenarioERC20(token1).transfer(to, amount1Out), "ScenarioV2Pair: transfer1");
        uint256 b0 = IScenarioERC20(token0).balanceOf(address(this));
        uint256 b1 = IScenarioERC20(token1).balanceOf(address(this));
        uint256 in0 = b0 > r0 - amount0Out ? b0 - (r0 - amount0Out) : 0;
        uint256 in1 = b1 > r1 - amount1Out ? b1 - (r1 - amount1Out) : 0;
        require(in0 > 0 || in1 > 0, "ScenarioV2Pair: no input");
        require((b0 * 1000 - in0 * 3) * (b1 * 1000 - in1 * 3) >= uint256(r0) * r1 * 1_000_000, "ScenarioV2Pair: K");
        _update(b0, b1);
        emit Swap(msg.sender, in0, in1, amount0Out, amount1Out, to);
    }

    function _update(uint256 b0, uint256 b1) private {
        require(b0 <= type(uint112).max && b1 <= type(uint112).max, "ScenarioV2Pair: overflow");
        _reserve0 = uint112(b0);
        _reserve1 = uint112(b1);
        _blockTimestampLast = uint32(block.timestamp);
        emit Sync(_reserve0, _reserve1);
    }
}
