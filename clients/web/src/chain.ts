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
