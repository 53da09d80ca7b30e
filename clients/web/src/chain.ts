// The chain's layout (R8): tiles from the left end to the right end, in rows that break only
// between two tiles, a double standing across (half the width of a tile lying along), the
// newest tile marked. Pure: the renderer measures how many units fit a row and draws cells.

/** A tile as it lies in the chain (the view's PlacedTile). */
export interface Placed {
  left: number;
  right: number;
  seat: number;
}

export interface ChainCell {
  /** Position in the chain, 0 = the left end. */
  index: number;
  left: number;
  right: number;
  seat: number;
  /** A double lies across the chain. */
  double: boolean;
  /** The tile laid last. */
  newest: boolean;
  /** Width in units: 2 for a tile along the chain, 1 for a double across. */
  units: number;
}

/** Units of a tile along the chain; a double across takes one. */
export const TILE_UNITS = 2;
export const DOUBLE_UNITS = 1;

/** The chain cut into rows of at most `unitsPerRow` units, breaking only between tiles
 * (a row always holds at least one tile, however narrow). */
export function layoutChain(
  chain: readonly Placed[],
  newestIndex: number | null,
  unitsPerRow: number,
): ChainCell[][] {
  const rows: ChainCell[][] = [];
  let row: ChainCell[] = [];
  let used = 0;
  chain.forEach((tile, index) => {
    const double = tile.left === tile.right;
    const units = double ? DOUBLE_UNITS : TILE_UNITS;
    if (row.length > 0 && used + units > unitsPerRow) {
      rows.push(row);
      row = [];
      used = 0;
    }
    row.push({ index, ...tile, double, newest: index === newestIndex, units });
    used += units;
  });
  if (row.length > 0) rows.push(row);
  return rows;
}

/** Which tile of `chain` is the newest, from the view's last action (a tile laid on the left
 * end is index 0, on the right end the last one), else carried over from the previous chain:
 * when the previous chain was this one less its first or last tile, that tile is new. */
export function newestIndex(
  chain: readonly Placed[],
  lastPlayedEnd: "left" | "right" | null,
  previous: { chain: readonly Placed[]; newest: number | null } | null,
): number | null {
  if (chain.length === 0) return null;
  if (lastPlayedEnd !== null) return lastPlayedEnd === "left" ? 0 : chain.length - 1;
  if (previous === null) return null;
  const same = (a: Placed | undefined, b: Placed | undefined): boolean =>
    a !== undefined && b !== undefined && a.left === b.left && a.right === b.right;
  const before = previous.chain;
  if (before.length === chain.length) {
    return before.every((p, i) => same(p, chain[i])) ? previous.newest : null;
  }
  if (before.length + 1 === chain.length) {
    if (before.every((p, i) => same(p, chain[i + 1]))) return 0;
    if (before.every((p, i) => same(p, chain[i]))) return chain.length - 1;
  }
  return null;
}

// -- all fives: the spinner layout (seed 002) ------------------------------------------------

/** Where a laid tile is: on the line (`chain`), or on a short side of the spinner. */
export type Arm = "line" | "up" | "down";

export interface ArmCell {
  /** Position on its arm, 0 = next to the spinner. */
  index: number;
  /** The half facing the spinner (PlacedTile.left on an arm). */
  inner: number;
  /** The half facing away: the end's number when it is the arm's last tile. */
  outer: number;
  seat: number;
  /** A double lies across its arm (drawn lying, the arm standing). */
  double: boolean;
  newest: boolean;
}

export interface SpinnerLayout {
  /** The line from its left end to its right end, one grid column per tile. */
  line: ChainCell[];
  /** The spinner's column (its index in the line). */
  spinner: number;
  /** The upper short side top to bottom: the outermost tile first. */
  up: ArmCell[];
  /** The lower short side top to bottom: the tile next to the spinner first. */
  down: ArmCell[];
  /** Units of the line (2 a tile along it, 1 a double across). */
  units: number;
}

function armCells(arm: readonly Placed[], newest: boolean): ArmCell[] {
  return arm.map((tile, index) => ({
    index,
    inner: tile.left,
    outer: tile.right,
    seat: tile.seat,
    double: tile.left === tile.right,
    newest: newest && index === arm.length - 1,
  }));
}

/** The spinner layout (all fives): the line in one row with the spinner in it, its short
 * sides as columns above and below it. `newest` names the tile laid last: an index of the
 * line, or the last tile of an arm. */
export function layoutSpinner(
  chain: readonly Placed[],
  spinner: number,
  up: readonly Placed[],
  down: readonly Placed[],
  newest: { arm: Arm; index: number | null },
): SpinnerLayout {
  const line = layoutChain(chain, newest.arm === "line" ? newest.index : null, Number.MAX_SAFE_INTEGER)[0] ?? [];
  const upCells = armCells(up, newest.arm === "up").reverse();
  const downCells = armCells(down, newest.arm === "down");
  return { line, spinner, up: upCells, down: downCells, units: line.reduce((sum, c) => sum + c.units, 0) };
}

/** What an end tile adds to the total: the number it shows, a double both halves. */
function endValue(tile: Placed, number: number): number {
  return tile.left === tile.right ? 2 * number : number;
}

/** The open ends' total (seed 002): each end's last tile its open half, a double both
 * halves; the spinner both halves, once, while one of its long sides is still uncovered,
 * and nothing once both are (its short sides then count only once a tile lies there). A
 * single opener that is not a double counts both halves. 0 on an empty table. */
export function endsTotal(
  chain: readonly Placed[],
  spinner: number | null,
  up: readonly Placed[],
  down: readonly Placed[],
): number {
  if (chain.length === 0) return 0;
  const first = chain[0]!;
  const last = chain[chain.length - 1]!;
  if (spinner === null || spinner < 0 || spinner >= chain.length) {
    return endValue(first, first.left) + endValue(last, last.right);
  }
  const center = chain[spinner]!;
  let total = 0;
  const leftCovered = spinner > 0;
  const rightCovered = spinner < chain.length - 1;
  if (!leftCovered || !rightCovered) total += 2 * center.left;
  if (leftCovered) total += endValue(first, first.left);
  if (rightCovered) total += endValue(last, last.right);
  for (const arm of [up, down]) {
    const tip = arm[arm.length - 1];
    if (tip !== undefined) total += endValue(tip, tip.right);
  }
  return total;
}
