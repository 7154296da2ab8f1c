// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {RiskV3Pool} from "./RiskV3Pool.sol";
import {ScenarioV3Pool} from "./ScenarioV3Pool.sol";

/// @title RiskV3Factory
/// @notice A Uniswap-v3-style factory for the seeded token-risk scenario: `getPool(a, b, fee)`
/// and v3's `PoolCreated` event. `createPool` makes a ScenarioV3Pool whose price is set at
/// creation and which does not trade; `createTradingPool` makes a RiskV3Pool, which swaps.
contract RiskV3Factory {
    mapping(address => mapping(address => mapping(uint24 => address))) public getPool;

    event PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool);

    function createPool(address tokenA, address tokenB, uint24 fee, uint160 sqrtPriceX96, int24 tick, uint128 liquidity)
        external
        returns (address pool)
    {
        require(tokenA != tokenB, "RiskV3Factory: identical tokens");
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        require(getPool[token0][token1][fee] == address(0), "RiskV3Factory: pool exists");
        pool = address(new ScenarioV3Pool(token0, token1, fee, sqrtPriceX96, tick, liquidity));
        _register(token0, token1, fee, pool);
    }

    function createTradingPool(address tokenA, address tokenB, uint24 fee, uint160 sqrtPriceX96, int24 tick)
        external
        returns (address pool)
    {
        require(tokenA != tokenB, "RiskV3Factory: identical tokens");
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        require(getPool[token0][token1][fee] == address(0), "RiskV3Factory: pool exists");
        pool = address(new RiskV3Pool(token0, token1, fee, _tickSpacing(fee), sqrtPriceX96, tick));
        _register(token0, token1, fee, pool);
    }

    function _tickSpacing(uint24 fee) private pure returns (int24) {
        return fee == 100 ? int24(1) : fee == 500 ? int24(10) : fee == 3000 ? int24(60) : int24(200);
    }

    function _register(address token0, address token1, uint24 fee, address pool) private {
        getPool[token0][token1][fee] = pool;
        getPool[token1][token0][fee] = pool;
        emit PoolCreated(token0, token1, fee, _tickSpacing(fee), pool);
    }
}
