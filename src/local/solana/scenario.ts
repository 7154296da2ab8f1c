/**
 * What local mode's Solana is seeded with, every account made by real instructions (litesvm runs
 * the SPL Token, Token-2022 and Associated Token programs): USDC at its canonical mint, payTo's
 * USDC account, a funded fee payer and funded buyers, and a scenario whose ground truth the
 * tests and the DexScreener stand-in's fixtures name: mints with and without each authority and
 * Token-2022 extension, their holders, and a wallet with balances and activity.
 */
import type { Address, Instruction } from "@solana/kit";
import { getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import {
  AccountState,
  AuthorityType,
  type ExtensionArgs,
  extension,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getPauseInstruction,
  getPostInitializeInstructionsForMintExtensions,
  getPreInitializeInstructionsForMintExtensions,
  getSetAuthorityInstruction,
  getSetTransferFeeInstruction,
  getThawAccountInstruction,
  getTransferCheckedInstruction,
  TOKEN_2022_PROGRAM_ADDRESS,
} from "@solana-program/token-2022";
import { TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import { solana } from "../../networks/solana.ts";
import { localKey, type SolanaKey } from "../../solana/keys.ts";
import type { LocalSolana } from "./local-chain.ts";

/** The classic SPL Token program, as kit's Address. */
export const TOKEN_PROGRAM = TOKEN_PROGRAM_ADDRESS as Address;
/** USDC's mint on the network local mode stands in for (canonical: buyers' stock code names it). */
export const USDC_MINT = solana.usdc.address as Address;

const LAMPORTS = 1_000_000_000n;
const USDC = 1_000_000n;
const BUYER_USDC = 1_000n * USDC;
const BUYERS = 3;

/**
 * Bump when what is seeded changes: a chain saved by another version is seeded afresh on open
 * (its accounts would otherwise lack what this code describes).
 */
export const SOLANA_SCENARIO_VERSION = 4;

interface MintPlan {
  symbol: string;
  program: "spl-token" | "spl-token-2022";
  keepMintAuthority: boolean;
  freezeAuthority: boolean;
  extensions: (creator: Address) => ExtensionArgs[];
  /** Token-2022 transfer fee at initialisation (bps; the most one transfer pays: 1,000 tokens). */
  feeBps?: number;
  /** The most one transfer pays at initialisation, atomic, when not FEE_MAX. */
  feeMax?: bigint;
  /** A transfer fee set after initialisation (bps): Token-2022 schedules it two epochs on. */
  rescheduledFeeBps?: number;
  /** The rescheduled fee's maximum, atomic (default 0: it charges nothing). */
  rescheduledFeeMax?: bigint;
  /** Token-2022 pausable, the creator its authority, paused once the holders are funded. */
  paused?: boolean;
  /** Holders' shares of the 1,000,000-token supply, in tokens. */
  shares: number[];
}

const FEE_MAX = 1_000_000_000n;
/**
 * The epoch a fee set in the seed is in force from: litesvm's clock stays in epoch 0 (blocks move
 * the slot only) and SetTransferFee schedules a new fee from the current epoch + 2.
 */
const RESCHEDULED_FROM_EPOCH = 2;

// Fifteen holders, the top ten with 77.5% of the supply (under the 80% concentration reason).
const EVEN = [100_000, 95_000, 90_000, 85_000, 80_000, 75_000, 70_000, 65_000, 60_000, 55_000, 50_000, 50_000, 50_000, 45_000, 30_000];

/** A mint's plan: what it differs in from a plain mint (both authorities revoked, no extension, EVEN holders). */
const plan = (symbol: string, program: MintPlan["program"], differs: Partial<MintPlan> = {}): MintPlan => ({
  symbol,
  program,
  keepMintAuthority: false,
  freezeAuthority: false,
  extensions: () => [],
  shares: EVEN,
  ...differs,
});

const PLANS: MintPlan[] = [
  plan("SAFE", "spl-token"),
  plan("MINTY", "spl-token", { keepMintAuthority: true }),
  plan("FRZ", "spl-token", { freezeAuthority: true }),
  plan("WHALE", "spl-token", { shares: [900_000, 50_000, 30_000, 20_000] }),
  plan("FEE", "spl-token-2022", { feeBps: 500 }),
  plan("HOOK", "spl-token-2022", {
    // The hook program is an address only: the scenario never transfers HOOK, so it never runs.
    extensions: (creator) => [
      extension("TransferHook", { authority: creator, programId: "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address }),
    ],
  }),
  plan("PDEL", "spl-token-2022", { extensions: (creator) => [extension("PermanentDelegate", { delegate: creator })] }),
  plan("SOUL", "spl-token-2022", { extensions: () => [extension("NonTransferable", {})] }),
  plan("DFRZ", "spl-token-2022", {
    freezeAuthority: true,
    extensions: () => [extension("DefaultAccountState", { state: AccountState.Frozen })],
  }),
  // 10% charged now; 0% set after, which stays pending (an authority can keep re-setting it so).
  plan("FEEDROP", "spl-token-2022", { feeBps: 1_000, rescheduledFeeBps: 0 }),
  plan("PAUSE", "spl-token-2022", { paused: true }),
  // Transfer fees whose maximum decides what a trade pays: 10% charging nothing (maximum 0); 10%
  // capped at 0.0001 token (dust); 10% capped at 1,000 tokens (above a 100 USD trade's 10%); 2%
  // in force with 10% capped at 0.0001 token pending.
  plan("FEENIL", "spl-token-2022", { feeBps: 1_000, feeMax: 0n }),
  plan("FEEDUST", "spl-token-2022", { feeBps: 1_000, feeMax: 100n }),
  plan("FEECAP", "spl-token-2022", { feeBps: 1_000 }),
  plan("FEEPEND", "spl-token-2022", { feeBps: 200, rescheduledFeeBps: 1_000, rescheduledFeeMax: 100n }),
];

/** A plan's extensions, those its fields name included. */
function extensionsOf(plan: MintPlan, creator: Address): ExtensionArgs[] {
  const out = plan.extensions(creator);
  if (plan.feeBps !== undefined) {
    const fee = { epoch: 0n, maximumFee: plan.feeMax ?? FEE_MAX, transferFeeBasisPoints: plan.feeBps };
    out.push(
      extension("TransferFeeConfig", {
        transferFeeConfigAuthority: creator,
        withdrawWithheldAuthority: creator,
        withheldAmount: 0n,
        olderTransferFee: fee,
        newerTransferFee: fee,
      }),
    );
  }
  // Not paused at initialisation: the holders are funded first (a paused mint mints nothing).
  if (plan.paused) out.push(extension("PausableConfig", { authority: creator, paused: false }));
  return out;
}

const DECIMALS = 6;
const TOKEN = 10n ** BigInt(DECIMALS);

/** The keys of the scenario (the same on every machine). */
export async function scenarioKeys() {
  const keys = (labels: string[]) => Promise.all(labels.map((label) => localKey(label)));
  return {
    feePayer: await localKey("fee-payer"),
    payTo: await localKey("pay-to"),
    usdcAuthority: await localKey("usdc-authority"),
    creator: await localKey("token-creator"),
    wallet: await localKey("profiled-wallet"),
    buyers: await keys(Array.from({ length: BUYERS }, (_, i) => `buyer-${i}`)),
    holders: await keys(Array.from({ length: 15 }, (_, i) => `holder-${i}`)),
    mints: await keys(PLANS.map((p) => `mint:${p.symbol}`)),
  };
}

/** The token account of `owner` for `mint` under `program`. */
export async function ataOf(owner: Address, mint: Address, program: Address = TOKEN_PROGRAM): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
  return ata;
}

/**
 * Seed a new chain, or only describe an already seeded one (`seed` false: the accounts exist).
 * Every amount in the answer is what the chain holds after seeding.
 */
export async function seedSolanaScenario(chain: LocalSolana, seed: boolean) {
  const k = await scenarioKeys();
  if (seed) {
    chain.airdrop(k.feePayer.address, 1_000n * LAMPORTS);
    chain.airdrop(k.creator.address, 100n * LAMPORTS);
    await seedUsdc(chain, k);
  }
  // Each mint as it is made, which is what meme-hunter must read back; holders' balances atomic, largest first.
  const mints = PLANS.map((plan, i) => {
    const exts = extensionsOf(plan, k.creator.address).map((e) => e.__kind);
    return {
      symbol: plan.symbol,
      mint: (k.mints[i] as SolanaKey).address,
      program: plan.program,
      decimals: DECIMALS,
      supply: (1_000_000n * TOKEN).toString(),
      mintAuthority: plan.keepMintAuthority,
      freezeAuthority: plan.freezeAuthority,
      // The fee in force (the seed's chain is in epoch 0), and the one set after it, pending.
      transferFeeBps: plan.feeBps ?? null,
      transferFeeMax: plan.feeBps === undefined ? null : (plan.feeMax ?? FEE_MAX).toString(),
      transferFeePending:
        plan.rescheduledFeeBps === undefined
          ? null
          : { bps: plan.rescheduledFeeBps, max: (plan.rescheduledFeeMax ?? 0n).toString(), fromEpoch: RESCHEDULED_FROM_EPOCH },
      transferHook: exts.includes("TransferHook"),
      permanentDelegate: exts.includes("PermanentDelegate"),
      nonTransferable: exts.includes("NonTransferable"),
      defaultFrozen: exts.includes("DefaultAccountState"),
      paused: plan.paused === true,
      holders: plan.shares.map((tokens, h) => ({
        owner: (plan.symbol === "SAFE" && h === 0 ? k.wallet : (k.holders[h] as SolanaKey)).address,
        amount: (BigInt(tokens) * TOKEN).toString(),
      })),
    };
  });
  if (seed)
    for (const [i, mint] of mints.entries()) await seedMint(chain, k.creator, k.mints[i] as SolanaKey, PLANS[i] as MintPlan, mint.holders);
  // The profiled wallet: 12.5 SOL, 250 USDC and SAFE's largest holding (100,000), then two transfers out.
  const walletUsdc = 250n * USDC - 5n * USDC;
  if (seed) {
    chain.airdrop(k.wallet.address, 12_500_000_000n);
    const walletAta = await ataOf(k.wallet.address, USDC_MINT);
    const buyerAta = await ataOf((k.buyers[0] as SolanaKey).address, USDC_MINT);
    await chain.run(k.feePayer.signer, [
      ataInstruction(k.feePayer, k.wallet.address, USDC_MINT, TOKEN_PROGRAM, walletAta),
      getMintToInstruction(
        { mint: USDC_MINT, token: walletAta, mintAuthority: k.usdcAuthority.signer, amount: 250n * USDC },
        { programAddress: TOKEN_PROGRAM },
      ),
    ]);
    await chain.run(k.feePayer.signer, [
      getTransferCheckedInstruction(
        { source: walletAta, mint: USDC_MINT, destination: buyerAta, authority: k.wallet.signer, amount: 5n * USDC, decimals: 6 },
        { programAddress: TOKEN_PROGRAM },
      ),
    ]);
    await chain.run(k.feePayer.signer, [
      getTransferSolInstruction({ source: k.wallet.signer, destination: k.feePayer.address, amount: 500_000_000n }),
    ]);
    chain.save();
  }
  return {
    network: solana.id,
    usdcMint: USDC_MINT,
    payTo: k.payTo.address,
    feePayer: k.feePayer,
    buyers: k.buyers,
    mints,
    // A wallet holding SOL, USDC and scenario tokens, with activity (wallet-profile's ground truth).
    wallet: {
      address: k.wallet.address,
      lamports: (12_500_000_000n - 500_000_000n).toString(),
      usdc: walletUsdc.toString(),
      tokens: [{ mint: (k.mints[0] as SolanaKey).address, amount: (100_000n * TOKEN).toString() }],
      // USDC account + mint, transfer out, SOL transfer out, and the SAFE holding's mint (seedMint).
      transactions: 4,
    },
  };
}

/** What the seeded chain holds, for the service, the tests and `data/devnet.json`. */
export type SolanaScenario = Awaited<ReturnType<typeof seedSolanaScenario>>;

/** One scenario mint: how it was made, which is what meme-hunter must read back. */
export type ScenarioMint = SolanaScenario["mints"][number];

function ataInstruction(payer: SolanaKey, owner: Address, mint: Address, program: Address, ata: Address): Instruction {
  return getCreateAssociatedTokenIdempotentInstruction({ payer: payer.signer, ata, owner, mint, tokenProgram: program });
}

type Keys = Awaited<ReturnType<typeof scenarioKeys>>;

/**
 * USDC at its canonical mint: a mint made by real instructions with a key we hold (so MintTo
 * works), copied to the canonical address (nobody holds its key), then payTo's and the buyers'
 * accounts, the buyers funded.
 */
async function seedUsdc(chain: LocalSolana, k: Keys): Promise<void> {
  const template = await localKey("usdc-template");
  const space = getMintSize();
  const rent = chain.svm.minimumBalanceForRentExemption(BigInt(space));
  await chain.run(k.feePayer.signer, [
    getCreateAccountInstruction({
      payer: k.feePayer.signer,
      newAccount: template.signer,
      lamports: rent,
      space,
      programAddress: TOKEN_PROGRAM,
    }),
    getInitializeMint2Instruction(
      { mint: template.address, decimals: 6, mintAuthority: k.usdcAuthority.address, freezeAuthority: k.usdcAuthority.address },
      { programAddress: TOKEN_PROGRAM },
    ),
  ]);
  const made = chain.svm.getAccount(template.address);
  if (!made.exists) throw new Error("the USDC template mint was not created");
  chain.svm.setAccount({ ...made, address: USDC_MINT });
  const owners = [k.payTo.address, ...k.buyers.map((b) => b.address)];
  const instructions: Instruction[] = [];
  for (const owner of owners) {
    const ata = await ataOf(owner, USDC_MINT);
    instructions.push(ataInstruction(k.feePayer, owner, USDC_MINT, TOKEN_PROGRAM, ata));
    if (owner !== k.payTo.address) {
      instructions.push(
        getMintToInstruction(
          { mint: USDC_MINT, token: ata, mintAuthority: k.usdcAuthority.signer, amount: BUYER_USDC },
          { programAddress: TOKEN_PROGRAM },
        ),
      );
    }
  }
  await chain.run(k.feePayer.signer, instructions);
  for (const buyer of k.buyers) chain.airdrop(buyer.address, 1n * LAMPORTS);
}

/** One scenario mint: created with its extensions, holders funded, then authorities revoked as planned. */
async function seedMint(
  chain: LocalSolana,
  creator: SolanaKey,
  key: SolanaKey,
  plan: MintPlan,
  holders: { owner: Address; amount: string }[],
): Promise<void> {
  const program = plan.program === "spl-token" ? TOKEN_PROGRAM : TOKEN_2022_PROGRAM_ADDRESS;
  const extensions = extensionsOf(plan, creator.address);
  const space = plan.program === "spl-token" ? getMintSize() : getMintSize(extensions);
  const rent = chain.svm.minimumBalanceForRentExemption(BigInt(space));
  await chain.run(creator.signer, [
    getCreateAccountInstruction({ payer: creator.signer, newAccount: key.signer, lamports: rent, space, programAddress: program }),
    ...getPreInitializeInstructionsForMintExtensions(key.address, extensions),
    getInitializeMint2Instruction(
      {
        mint: key.address,
        decimals: DECIMALS,
        mintAuthority: creator.address,
        freezeAuthority: plan.freezeAuthority ? creator.address : null,
      },
      { programAddress: program },
    ),
    ...getPostInitializeInstructionsForMintExtensions(key.address, creator.signer, extensions),
  ]);
  const frozenByDefault = extensions.some((e) => e.__kind === "DefaultAccountState");
  for (const holder of holders) {
    const ata = await ataOf(holder.owner, key.address, program);
    await chain.run(creator.signer, [
      ataInstruction(creator, holder.owner, key.address, program, ata),
      // A default-frozen account must be thawed by the freeze authority before it can receive.
      ...(frozenByDefault
        ? [getThawAccountInstruction({ account: ata, mint: key.address, owner: creator.signer }, { programAddress: program })]
        : []),
      getMintToInstruction(
        { mint: key.address, token: ata, mintAuthority: creator.signer, amount: BigInt(holder.amount) },
        { programAddress: program },
      ),
    ]);
  }
  if (!plan.keepMintAuthority) {
    await chain.run(creator.signer, [
      getSetAuthorityInstruction(
        { owned: key.address, owner: creator.signer, authorityType: AuthorityType.MintTokens, newAuthority: null },
        { programAddress: program },
      ),
    ]);
  }
  if (plan.rescheduledFeeBps !== undefined) {
    await chain.run(creator.signer, [
      getSetTransferFeeInstruction({
        mint: key.address,
        transferFeeConfigAuthority: creator.signer,
        transferFeeBasisPoints: plan.rescheduledFeeBps,
        maximumFee: plan.rescheduledFeeMax ?? 0n,
      }),
    ]);
  }
  if (plan.paused) await chain.run(creator.signer, [getPauseInstruction({ mint: key.address, authority: creator.signer })]);
}
