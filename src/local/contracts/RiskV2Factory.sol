// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IRiskERC20 {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
}

/// @title RiskV2Pair
/// @notice A Uniswap-v2-style constant-product pair created by RiskV2Factory: reserves synced
/// from balances, `mint` and `burn` of liquidity with v2's Mint/Burn/Sync/Swap events, and a
/// `swap` with the 0.3% fee invariant. Liquidity shares are kept in `liquidityOf` rather than an
/// ERC-20 (no LP Transfer logs), which is all the seeded token-risk scenario needs.
contract RiskV2Pair {
    uint256 private constant MINIMUM_LIQUIDITY = 1000;

    address public immutable factory;
    address public immutable token0;
    address public immutable token1;
    uint256 public totalSupply;
    mapping(address => uint256) public liquidityOf;

    uint112 private _reserve0;
    uint112 private _reserve1;
    uint32 private _blockTimestampLast;

    event Mint(address indexed sender, uint256 amount0, uint256 amount1);
    event Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to);
    event Swap(
        address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to
    );
    event Sync(uint112 reserve0, uint112 reserve1);

    constructor(address tokenA, address tokenB) {
        factory = msg.sender;
        (token0, token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
    }

    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) {
        return (_reserve0, _reserve1, _blockTimestampLast);
    }

    /// @notice Credit `to` with liquidity for the tokens transferred in since the last update.
    function mint(address to) external returns (uint256 liquidity) {
        uint256 b0 = IRiskERC20(token0).balanceOf(address(this));
        uint256 b1 = IRiskERC20(token1).balanceOf(address(this));
        uint256 a0 = b0 - _reserve0;
        uint256 a1 = b1 - _reserve1;
        if (totalSupply == 0) {
            liquidity = _sqrt(a0 * a1) - MINIMUM_LIQUIDITY;
            totalSupply = MINIMUM_LIQUIDITY; // locked forever, as in Uniswap v2
        } else {
            uint256 l0 = (a0 * totalSupply) / _reserve0;
            uint256 l1 = (a1 * totalSupply) / _reserve1;
            liquidity = l0 < l1 ? l0 : l1;
        }
        require(liquidity > 0, "RiskV2Pair: no liquidity minted");
        liquidityOf[to] += liquidity;
        totalSupply += liquidity;
        _update(b0, b1);
        emit Mint(msg.sender, a0, a1);
    }

    /// @notice Withdraw `liquidity` of the caller's share to `to`, both tokens pro rata.
    function burn(uint256 liquidity, address to) external returns (uint256 amount0, uint256 amount1) {
        liquidityOf[msg.sender] -= liquidity;
        uint256 b0 = IRiskERC20(token0).balanceOf(address(this));
        uint256 b1 = IRiskERC20(token1).balanceOf(address(this));
        amount0 = (liquidity * b0) / totalSupply;
        amount1 = (liquidity * b1) / totalSupply;
        totalSupply -= liquidity;
        require(IRiskERC20(token0).transfer(to, amount0), "RiskV2Pair: transfer0");
        require(IRiskERC20(token1).transfer(to, amount1), "RiskV2Pair: transfer1");
        _update(IRiskERC20(token0).balanceOf(address(this)), IRiskERC20(token1).balanceOf(address(this)));
        emit Burn(msg.sender, amount0, amount1, to);
    }

    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata) external {
        require(amount0Out > 0 || amount1Out > 0, "RiskV2Pair: no output");
        (uint112 r0, uint112 r1) = (_reserve0, _reserve1);
        require(amount0Out < r0 && amount1Out < r1, "RiskV2Pair: liquidity");
        if (amount0Out > 0) require(IRiskERC20(token0).transfer(to, amount0Out), "RiskV2Pair: transfer0");
        if (amount1Out > 0) require(IRiskERC20(token1).transfer(to, amount1Out), "RiskV2Pair: transfer1");
        uint256 b0 = IRiskERC20(token0).balanceOf(address(this));
        uint256 b1 = IRiskERC20(token1).balanceOf(address(this));
        uint256 in0 = b0 > r0 - amount0Out ? b0 - (r0 - amount0Out) : 0;
        uint256 in1 = b1 > r1 - amount1Out ? b1 - (r1 - amount1Out) : 0;
        require(in0 > 0 || in1 > 0, "RiskV2Pair: no input");
        require((b0 * 1000 - in0 * 3) * (b1 * 1000 - in1 * 3) >= uint256(r0) * r1 * 1_000_000, "RiskV2Pair: K");
        _update(b0, b1);
        emit Swap(msg.sender, in0, in1, amount0Out, amount1Out, to);
    }

    function sync() external {
        _update(IRiskERC20(token0).balanceOf(address(this)), IRiskERC20(token1).balanceOf(address(this)));
    }

    function _update(uint256 b0, uint256 b1) private {
        require(b0 <= type(uint112).max && b1 <= type(uint112).max, "RiskV2Pair: overflow");
        _reserve0 = uint112(b0);
        _reserve1 = uint112(b1);
        _blockTimestampLast = uint32(block.timestamp);
        emit Sync(_reserve0, _reserve1);
    }

    function _sqrt(uint256 y) private pure returns (uint256 z) {
        if (y > 3) {
            z = y;
            uint256 x = y / 2 + 1;
            while (x < z) {
                z = x;
                x = (y / x + x) / 2;
            }
        } else if (y != 0) {
            z = 1;
        }
    }
}

/// @title RiskV2Factory
/// @notice A Uniswap-v2-style factory: one pair per token pair, `getPair`, `allPairs` and v2's
/// `PairCreated` event, which the new-pair hunter reads.
contract RiskV2Factory {
    mapping(address => mapping(address => address)) public getPair;
    address[] public allPairs;

    event PairCreated(address indexed token0, address indexed token1, address pair, uint256);

    function allPairsLength() external view returns (uint256) {
        return allPairs.length;
    }

    function createPair(address tokenA, address tokenB) external returns (address pair) {
        require(tokenA != tokenB, "RiskV2Factory: identical tokens");
        require(getPair[tokenA][tokenB] == address(0), "RiskV2Factory: pair exists");
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        pair = address(new RiskV2Pair(token0, token1));
        getPair[token0][token1] = pair;
        getPair[token1][token0] = pair;
        allPairs.push(pair);
        emit PairCreated(token0, token1, pair, allPairs.length);
    }
}
