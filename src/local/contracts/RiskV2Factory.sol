// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ScenarioV2Pair} from "./ScenarioV2Pair.sol";

/// @title RiskV2Factory
/// @notice A Uniswap-v2-style factory: one pair per token pair, `getPair`, `allPairs` and v2's
/// `PairCreated` event, which the new-pair hunter reads.
contract RiskV2Factory {
    mapping(address => mapping(address => address)) public getPair;
    address[] public allPairs;

    event PairCreated(address indexed token0, address indexed token1, address pair, uint256);

    function allPairsLength() external view returns (uint256) {
        return allPairs.length;
    }

    function createPair(address tokenA, address tokenB) external returns (address pair) {
        require(tokenA != tokenB, "RiskV2Factory: identical tokens");
        require(getPair[tokenA][tokenB] == address(0), "RiskV2Factory: pair exists");
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        pair = address(new ScenarioV2Pair(token0, token1));
        getPair[token0][token1] = pair;
        getPair[token1][token0] = pair;
        allPairs.push(pair);
        emit PairCreated(token0, token1, pair, allPairs.length);
    }
}
