// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title MemeToken
/// @notice A clean ERC-20 of the seeded token-risk scenario: its whole supply minted once to the
/// deployer, no owner and no privileged function (nothing to mint, pause, blacklist or tax).
contract MemeToken is ERC20 {
    constructor(string memory name_, string memory symbol_, uint256 supply) ERC20(name_, symbol_) {
        _mint(msg.sender, supply);
    }
}
