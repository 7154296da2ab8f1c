// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BuyTaxToken
/// @notice A taxed token of the seeded token-risk scenario, traded mostly in a concentrated-
/// liquidity pool: a transfer out of its pool (a buy) to anyone but the owner pays `buyTaxBps` of
/// the amount to the owner; the owner can change the tax. The tax is taken on the way out because a
/// v3-style pool checks that it received the whole input of a swap (a fee on transfers into the
/// pool makes every sale revert), so this is how a taxed token can trade in such a pool.
contract BuyTaxToken is ERC20 {
    address public owner;
    address public pool;
    uint256 public buyTaxBps;

    constructor(string memory name_, string memory symbol_, uint256 supply, uint256 buyTaxBps_) ERC20(name_, symbol_) {
        owner = msg.sender;
        buyTaxBps = buyTaxBps_;
        _mint(msg.sender, supply);
    }

    function setPool(address pool_) external {
        require(msg.sender == owner, "BuyTaxToken: not owner");
        pool = pool_;
    }

    function setBuyTax(uint256 bps) external {
        require(msg.sender == owner && bps <= 10_000, "BuyTaxToken: not allowed");
        buyTaxBps = bps;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == pool && pool != address(0) && to != owner && buyTaxBps > 0) {
            uint256 tax = (value * buyTaxBps) / 10_000;
            super._update(from, owner, tax);
            value -= tax;
        }
        super._update(from, to, value);
    }
}
