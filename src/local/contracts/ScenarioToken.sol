// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title ScenarioToken
/// @notice A plain (non-proxy) ERC-20 of the seeded local scenario (src/local/devnet/scenario.ts):
/// what token-check must report as a token that is not a proxy.
contract ScenarioToken is ERC20 {
    /// @notice The deployer: the only address allowed to mint.
    address public immutable minter;
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        minter = msg.sender;
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == minter, "ScenarioToken: not minter");
        _mint(to, amount);
    }
}
