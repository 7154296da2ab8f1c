// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IUniswapV2Pair} from "@uniswap/v2-core/contracts/interfaces/IUniswapV2Pair.sol";

/// @title ScenarioRouter
/// @notice A router with Uniswap SwapRouter02's `exactInputSingle` entry point and `factory()`,
/// routing each swap through the registered Uniswap v2 pair of the token pair.
contract ScenarioRouter {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    address public immutable factory;
    mapping(address => mapping(address => address)) public pairFor;

    constructor(address factory_) {
        factory = factory_;
    }

    function setPair(address tokenA, address tokenB, address pair) external {
        require(msg.sender == factory, "ScenarioRouter: not factory");
        pairFor[tokenA][tokenB] = pair;
        pairFor[tokenB][tokenA] = pair;
    }

    function exactInputSingle(ExactInputSingleParams calldata params) external payable returns (uint256 amountOut) {
        address pair = pairFor[params.tokenIn][params.tokenOut];
        require(pair != address(0), "ScenarioRouter: no pair");
        (uint112 r0, uint112 r1,) = IUniswapV2Pair(pair).getReserves();
        bool zeroIn = IUniswapV2Pair(pair).token0() == params.tokenIn;
        (uint256 reserveIn, uint256 reserveOut) = zeroIn ? (uint256(r0), uint256(r1)) : (uint256(r1), uint256(r0));
        uint256 inWithFee = params.amountIn * 997;
        amountOut = (inWithFee * reserveOut) / (reserveIn * 1000 + inWithFee);
        require(amountOut >= params.amountOutMinimum, "ScenarioRouter: too little received");
        require(IERC20(params.tokenIn).transferFrom(msg.sender, pair, params.amountIn), "ScenarioRouter: transferFrom");
        (uint256 out0, uint256 out1) = zeroIn ? (uint256(0), amountOut) : (amountOut, uint256(0));
        IUniswapV2Pair(pair).swap(out0, out1, params.recipient, "");
    }
}
