// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IUniswapV3Pool} from "@uniswap/v3-core/contracts/interfaces/IUniswapV3Pool.sol";
import {IUniswapV3MintCallback} from "@uniswap/v3-core/contracts/interfaces/callback/IUniswapV3MintCallback.sol";

/// @title ScenarioV3Minter
/// @notice Adds the seeded token-risk scenario's positions to Uniswap v3 pools. A pool's `mint`
/// asks its caller for the tokens owed through `uniswapV3MintCallback`, which the scenario's
/// externally owned deployer cannot answer: this contract answers it, paying from what the
/// deployer approved it.
contract ScenarioV3Minter is IUniswapV3MintCallback {
    /// The pool being minted into: only it may ask to be paid.
    address private _pool;

    /// @notice Add `amount` of liquidity between the two ticks to `pool`, owned and paid by the caller.
    function mint(address pool, int24 tickLower, int24 tickUpper, uint128 amount) external {
        _pool = pool;
        IUniswapV3Pool(pool).mint(msg.sender, tickLower, tickUpper, amount, abi.encode(msg.sender));
        _pool = address(0);
    }

    function uniswapV3MintCallback(uint256 amount0Owed, uint256 amount1Owed, bytes calldata data) external override {
        require(msg.sender == _pool, "ScenarioV3Minter: not the pool being minted");
        address payer = abi.decode(data, (address));
        if (amount0Owed > 0) require(IERC20(IUniswapV3Pool(msg.sender).token0()).transferFrom(payer, msg.sender, amount0Owed));
        if (amount1Owed > 0) require(IERC20(IUniswapV3Pool(msg.sender).token1()).transferFrom(payer, msg.sender, amount1Owed));
    }
}
