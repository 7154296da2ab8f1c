// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title HoneypotToken
/// @notice A honeypot of the seeded token-risk scenario: anyone can buy and move it between
/// wallets, but a transfer into its pair (a sell) reverts for everyone except the owner.
contract HoneypotToken is ERC20 {
    address public owner;
    address public pair;

    constructor(string memory name_, string memory symbol_, uint256 supply) ERC20(name_, symbol_) {
        owner = msg.sender;
        _mint(msg.sender, supply);
    }

    function setPair(address pair_) external {
        require(msg.sender == owner, "HoneypotToken: not owner");
        pair = pair_;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (to == pair && pair != address(0) && from != owner) revert("HoneypotToken: transfer to pair not allowed");
        super._update(from, to, value);
    }
}
