// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title SellTaxToken
/// @notice A taxed token of the seeded token-risk scenario: a transfer into its pair (a sell) by
/// anyone but the owner pays `sellTaxBps` of the amount to the owner; the owner can change the tax.
contract SellTaxToken is ERC20 {
    address public owner;
    address public pair;
    uint256 public sellTaxBps;

    constructor(string memory name_, string memory symbol_, uint256 supply, uint256 sellTaxBps_) ERC20(name_, symbol_) {
        owner = msg.sender;
        sellTaxBps = sellTaxBps_;
        _mint(msg.sender, supply);
    }

    function setPair(address pair_) external {
        require(msg.sender == owner, "SellTaxToken: not owner");
        pair = pair_;
    }

    function setSellTax(uint256 bps) external {
        require(msg.sender == owner && bps <= 10_000, "SellTaxToken: not allowed");
        sellTaxBps = bps;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (to == pair && pair != address(0) && from != owner && from != address(0) && sellTaxBps > 0) {
            uint256 tax = (value * sellTaxBps) / 10_000;
            super._update(from, owner, tax);
            value -= tax;
        }
        super._update(from, to, value);
    }
}
