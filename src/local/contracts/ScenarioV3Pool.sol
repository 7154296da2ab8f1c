// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ScenarioV3Pool
/// @notice A Uniswap-v3-style pool as the address classifier sees one: `slot0`, `token0`,
/// `token1`, `fee`, `liquidity`, `factory`, with the price set at deployment. Its token
/// balances are real (liquidity is transferred in); it does not trade (the token-risk scenario's
/// pools, Uniswap v3's own, do).
contract ScenarioV3Pool {
    struct Slot0 {
        uint160 sqrtPriceX96;
        int24 tick;
        uint16 observationIndex;
        uint16 observationCardinality;
        uint16 observationCardinalityNext;
        uint8 feeProtocol;
        bool unlocked;
    }

    address public immutable factory;
    address public immutable token0;
    address public immutable token1;
    uint24 public immutable fee;
    uint128 public liquidity;
    Slot0 public slot0;

    constructor(address tokenA, address tokenB, uint24 fee_, uint160 sqrtPriceX96, int24 tick, uint128 liquidity_) {
        factory = msg.sender;
        (token0, token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        fee = fee_;
        liquidity = liquidity_;
        slot0 = Slot0(sqrtPriceX96, tick, 0, 1, 1, 0, true);
    }
}
