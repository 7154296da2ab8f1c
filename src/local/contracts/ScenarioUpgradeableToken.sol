// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";

/// @title ScenarioUpgradeableToken
/// @notice The implementation behind the seeded scenario's EIP-1967 proxy token: OpenZeppelin's
/// upgradeable ERC-20. All state lives in storage written by `initialize` (never a constructor),
/// as upgradeable tokens do, so the proxy answers name/symbol/decimals from its own storage
/// through delegatecall.
contract ScenarioUpgradeableToken is ERC20Upgradeable {
    address public owner;
    uint8 private _decimals;

    function initialize(string calldata name_, string calldata symbol_, uint8 decimals_, address owner_) external initializer {
        __ERC20_init(name_, symbol_);
        _decimals = decimals_;
        owner = owner_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "ScenarioUpgradeableToken: not owner");
        _mint(to, amount);
    }
}
