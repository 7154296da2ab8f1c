// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title WETH9
/// @notice Wrapped Ether with the canonical WETH9 interface, for the Base predeploy address
/// 0x4200000000000000000000000000000000000006 on the local devnet.
/// @dev Placed with `anvil_setCode`, so it keeps no constructor-written state: metadata are
/// constants and totalSupply is the contract's ETH balance, as in the original.
contract WETH9 {
    string public constant name = "Wrapped Ether";
    string public constant symbol = "WETH";
    uint8 public constant decimals = 18;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Approval(address indexed src, address indexed guy, uint256 wad);
    event Transfer(address indexed src, address indexed dst, uint256 wad);
    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);

    receive() external payable {
        deposit();
    }

    fallback() external payable {
        deposit();
    }

    function deposit() public payable {
        balanceOf[msg.sender] += msg.value;
        emit Deposit(msg.sender, msg.value);
    }

    function withdraw(uint256 wad) external {
        require(balanceOf[msg.sender] >= wad);
        balanceOf[msg.sender] -= wad;
        emit Withdrawal(msg.sender, wad);
        // call instead of the original transfer(): solc 0.8.3x deprecates transfer, and forwarding
        // all gas lets smart-wallet buyers unwrap. Balance is debited first, so reentrancy is harmless.
        (bool ok,) = payable(msg.sender).call{value: wad}("");
        require(ok);
    }

    function totalSupply() external view returns (uint256) {
        return address(this).balance;
    }

    function approve(address guy, uint256 wad) external returns (bool) {
        allowance[msg.sender][guy] = wad;
        emit Approval(msg.sender, guy, wad);
        return true;
    }

    function transfer(address dst, uint256 wad) external returns (bool) {
        return transferFrom(msg.sender, dst, wad);
    }

    function transferFrom(address src, address dst, uint256 wad) public returns (bool) {
        require(balanceOf[src] >= wad);

        if (src != msg.sender && allowance[src][msg.sender] != type(uint256).max) {
            require(allowance[src][msg.sender] >= wad);
            allowance[src][msg.sender] -= wad;
        }

        balanceOf[src] -= wad;
        balanceOf[dst] += wad;

        emit Transfer(src, dst, wad);
        return true;
    }
}
