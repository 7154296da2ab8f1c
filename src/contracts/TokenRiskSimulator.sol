// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface ISimERC20 {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
}

interface ISimV2Pool {
    function token0() external view returns (address);
    function getReserves() external view returns (uint112, uint112, uint32);
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata data) external;
}

interface ISimQuotingPool {
    function getAmountOut(uint256 amountIn, address tokenIn) external view returns (uint256);
}

/// @title TokenRiskSimulator
/// @notice Never deployed: the honeypot check places this code at a throwaway address with an
/// `eth_call` state override, funds it with the quote token, and calls `simulate`. In one call,
/// nothing of which is ever mined, it buys the token through a v2-style pool, sends half of what
/// it got to a fresh address, and sells the rest back; every step's amounts and revert data come
/// back, so the caller computes the taxes and sees why a step failed.
contract TokenRiskSimulator {
    struct Result {
        bool buyOk;
        bytes buyError;
        uint256 buyExpected;
        uint256 bought;
        bool transferOk;
        bytes transferError;
        uint256 transferSent;
        uint256 transferReceived;
        bool sellOk;
        bytes sellError;
        uint256 sellSent;
        uint256 sellArrived;
        uint256 sellExpected;
        uint256 sellReceived;
    }

    /// @param feeBps the pool's fee for the constant-product formula; ignored when `poolQuotes`.
    /// @param poolQuotes the pool prices its own swaps (`getAmountOut(amountIn, tokenIn)`, Aerodrome's).
    function simulate(address pool, address token, address quote, uint256 quoteIn, address fresh, uint256 feeBps, bool poolQuotes)
        external
        returns (Result memory r)
    {
        try this.buy(pool, token, quote, quoteIn, feeBps, poolQuotes) returns (uint256 expected, uint256 bought) {
            r.buyOk = true;
            r.buyExpected = expected;
            r.bought = bought;
        } catch (bytes memory reason) {
            r.buyError = reason;
            return r;
        }
        if (r.bought == 0) return r;
        r.transferSent = r.bought / 2;
        try this.send(token, fresh, r.transferSent) returns (uint256 received) {
            r.transferOk = true;
            r.transferReceived = received;
        } catch (bytes memory reason) {
            r.transferError = reason;
        }
        r.sellSent = ISimERC20(token).balanceOf(address(this));
        try this.sell(pool, token, quote, r.sellSent, feeBps, poolQuotes) returns (uint256 arrived, uint256 expected, uint256 received) {
            r.sellOk = true;
            r.sellArrived = arrived;
            r.sellExpected = expected;
            r.sellReceived = received;
        } catch (bytes memory reason) {
            r.sellError = reason;
        }
    }

    function buy(address pool, address token, address quote, uint256 quoteIn, uint256 feeBps, bool poolQuotes)
        external
        returns (uint256 expected, uint256 bought)
    {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        (uint256 rQuote, uint256 rToken, bool quoteIs0) = _reserves(pool, quote);
        expected = poolQuotes ? ISimQuotingPool(pool).getAmountOut(quoteIn, quote) : _amountOut(quoteIn, rQuote, rToken, feeBps);
        uint256 before = ISimERC20(token).balanceOf(address(this));
        _transfer(quote, pool, quoteIn);
        ISimV2Pool(pool).swap(quoteIs0 ? 0 : expected, quoteIs0 ? expected : 0, address(this), "");
        bought = ISimERC20(token).balanceOf(address(this)) - before;
    }

    function send(address token, address to, uint256 amount) external returns (uint256 received) {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        uint256 before = ISimERC20(token).balanceOf(to);
        _transfer(token, to, amount);
        received = ISimERC20(token).balanceOf(to) - before;
    }

    function sell(address pool, address token, address quote, uint256 amount, uint256 feeBps, bool poolQuotes)
        external
        returns (uint256 arrived, uint256 expected, uint256 received)
    {
        require(msg.sender == address(this), "TokenRiskSimulator: internal");
        uint256 poolBefore = ISimERC20(token).balanceOf(pool);
        _transfer(token, pool, amount);
        arrived = ISimERC20(token).balanceOf(pool) - poolBefore;
        (expected, received) = _swapIn(pool, token, quote, feeBps, poolQuotes);
    }

    /// @dev Swap what the pool holds of `token` beyond its reserve for `quote`, as a v2 pair prices it.
    function _swapIn(address pool, address token, address quote, uint256 feeBps, bool poolQuotes)
        private
        returns (uint256 expected, uint256 received)
    {
        (uint256 rQuote, uint256 rToken, bool quoteIs0) = _reserves(pool, quote);
        uint256 input = ISimERC20(token).balanceOf(pool) - rToken;
        expected = poolQuotes ? ISimQuotingPool(pool).getAmountOut(input, token) : _amountOut(input, rToken, rQuote, feeBps);
        uint256 before = ISimERC20(quote).balanceOf(address(this));
        ISimV2Pool(pool).swap(quoteIs0 ? expected : 0, quoteIs0 ? 0 : expected, address(this), "");
        received = ISimERC20(quote).balanceOf(address(this)) - before;
    }

    function _reserves(address pool, address quote) private view returns (uint256 rQuote, uint256 rToken, bool quoteIs0) {
        (uint112 r0, uint112 r1,) = ISimV2Pool(pool).getReserves();
        quoteIs0 = ISimV2Pool(pool).token0() == quote;
        (rQuote, rToken) = quoteIs0 ? (uint256(r0), uint256(r1)) : (uint256(r1), uint256(r0));
    }

    function _amountOut(uint256 amountIn, uint256 reserveIn, uint256 reserveOut, uint256 feeBps) private pure returns (uint256) {
        uint256 inWithFee = amountIn * (10_000 - feeBps);
        return (inWithFee * reserveOut) / (reserveIn * 10_000 + inWithFee);
    }

    /// @dev Tokens that return nothing from `transfer` (USDT-style) are accepted, as SafeERC20 does.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeCall(ISimERC20.transfer, (to, amount)));
        if (!ok) {
            assembly {
                revert(add(data, 32), mload(data))
            }
        }
        require(data.length == 0 || abi.decode(data, (bool)), "TokenRiskSimulator: transfer returned false");
    }
}
