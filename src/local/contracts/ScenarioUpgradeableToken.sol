// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ScenarioUpgradeableToken
/// @notice The implementation behind the seeded scenario's EIP-1967 proxy token. All state lives
/// in storage written by `initialize` (never a constructor), as upgradeable tokens do, so the
/// proxy answers name/symbol/decimals from its own storage through delegatecall.
contract ScenarioUpgradeableToken {
    string public name;
    string public symbol;
    uint8 public decimals;
    uint256 public totalSupply;
    address public owner;
    bool private _initialized;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function initialize(string calldata name_, string calldata symbol_, uint8 decimals_, address owner_) external {
        require(!_initialized, "ScenarioUpgradeableToken: initialized");
        _initialized = true;
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = owner_;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "ScenarioUpgradeableToken: not owner");
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= amount, "ScenarioUpgradeableToken: allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - amount;
        _move(from, to, amount);
        return true;
    }

    function _move(address from, address to, uint256 amount) private {
        require(balanceOf[from] >= amount, "ScenarioUpgradeableToken: balance");
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
