import { describe, expect, it } from "vitest";
import { layoutChain, newestIndex, type Placed } from "../src/chain";

const tile = (left: number, right: number, seat = 0): Placed => ({ left, right, seat });

describe("chain layout", () => {
  const chain = [tile(1, 6), tile(6, 6), tile(6, 3), tile(3, 3), tile(3, 0), tile(0, 5)];

  it("keeps every tile once, in order, breaking rows only between tiles", () => {
    const rows = layoutChain(chain, null, 5);
    expect(rows.flat().map((c) => c.index)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const row of rows) expect(row.reduce((n, c) => n + c.units, 0)).toBeLessThanOrEqual(5);
    expect(rows.map((r) => r.map((c) => c.index))).toEqual([[0, 1, 2], [3, 4, 5]]);
    expect(layoutChain(chain, null, 4).map((r) => r.map((c) => c.index))).toEqual([[0, 1], [2, 3], [4, 5]]);
  });

  it("stands doubles across (one unit) and lays the others along (two units)", () => {
    const cells = layoutChain(chain, null, 100).flat();
    expect(cells.filter((c) => c.double).map((c) => c.index)).toEqual([1, 3]);
    expect(cells.map((c) => c.units)).toEqual([2, 1, 2, 1, 2, 2]);
    expect(layoutChain(chain, null, 100)).toHaveLength(1);
  });

  it("puts a tile on its own row when the row is narrower than a tile", () => {
    const rows = layoutChain([tile(1, 2), tile(2, 4)], null, 1);
    expect(rows.map((r) => r.length)).toEqual([1, 1]);
    expect(layoutChain([], null, 10)).toEqual([]);
  });

  it("marks exactly the newest tile", () => {
    const cells = layoutChain(chain, 5, 4).flat();
    expect(cells.filter((c) => c.newest).map((c) => c.index)).toEqual([5]);
  });
});

describe("newest tile", () => {
  const before = [tile(6, 3), tile(3, 1)];
  it("follows the end of the last play", () => {
    expect(newestIndex([tile(5, 6), ...before], "left", null)).toBe(0);
    expect(newestIndex([...before, tile(1, 4)], "right", null)).toBe(2);
    expect(newestIndex([], "left", null)).toBeNull();
  });
  it("is carried over a pass, found from the previous chain after a skipped view", () => {
    expect(newestIndex(before, null, { chain: before, newest: 1 })).toBe(1);
    expect(newestIndex([tile(2, 6), ...before], null, { chain: before, newest: 1 })).toBe(0);
    expect(newestIndex([...before, tile(1, 1)], null, { chain: before, newest: 0 })).toBe(2);
    expect(newestIndex([tile(0, 0)], null, { chain: before, newest: 0 })).toBeNull();
  });
});
