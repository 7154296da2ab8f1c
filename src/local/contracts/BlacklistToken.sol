// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BlacklistToken
/// @notice A blacklisting token of the seeded token-risk scenario: the owner can bar any address
/// from sending or receiving it. A fresh buyer trades freely, until the owner decides otherwise.
contract BlacklistToken is ERC20 {
    address public owner;
    mapping(address => bool) public isBlacklisted;

    constructor(string memory name_, string memory symbol_, uint256 supply) ERC20(name_, symbol_) {
        owner = msg.sender;
        _mint(msg.sender, supply);
    }

    function setBlacklist(address account, bool barred) external {
        require(msg.sender == owner, "BlacklistToken: not owner");
        isBlacklisted[account] = barred;
    }

    function _update(address from, address to, uint256 value) internal override {
        require(!isBlacklisted[from] && !isBlacklisted[to], "BlacklistToken: blacklisted");
        super._update(from, to, value);
    }
}
