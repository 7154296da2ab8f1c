// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TransparentUpgradeableProxy} from "@openzeppelin/contracts/proxy/transparent/TransparentUpgradeableProxy.sol";

/// @title ScenarioProxy
/// @notice OpenZeppelin's transparent proxy, unchanged: implementation and admin live in the
/// EIP-1967 slots, which is what token-check reads to detect a proxy.
contract ScenarioProxy is TransparentUpgradeableProxy {
    constructor(address logic, address initialOwner, bytes memory data)
        TransparentUpgradeableProxy(logic, initialOwner, data)
    {}
}
