import { describe, expect, it } from "vitest";
import { STORAGE_KEY, SeatStore, codeFromHash, hashOf } from "../src/seats";

class MemoryStorage {
  data = new Map<string, string>();
  getItem(key: string): string | null {
    return this.data.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.data.set(key, value);
  }
  removeItem(key: string): void {
    this.data.delete(key);
  }
}

const seat = { code: "K7XQ2MPAHR", tableId: "t1", seat: 2, token: "secret", name: "Chloé" };

describe("saved seats", () => {
  it("keeps a seat per code and forgets it", () => {
    const storage = new MemoryStorage();
    const store = new SeatStore(storage);
    store.save(seat);
    store.save({ ...seat, code: "ABCDEFGHJK", tableId: "t2" });
    expect(new SeatStore(storage).get("K7XQ2MPAHR")).toEqual(seat);
    store.forget("K7XQ2MPAHR");
    expect(store.get("K7XQ2MPAHR")).toBeNull();
    expect(store.get("ABCDEFGHJK")?.tableId).toBe("t2");
    store.forget("ABCDEFGHJK");
    expect(storage.getItem(STORAGE_KEY)).toBeNull();
  });

  it("gives each tab of one browser its own seat at one table back on a reload", () => {
    const browser = new MemoryStorage();
    const [tabA, tabB] = [new MemoryStorage(), new MemoryStorage()];
    new SeatStore(browser, tabA).save(seat);
    new SeatStore(browser, tabB).save({ ...seat, seat: 3, token: "other", name: "Dan" });
    // The browser's storage holds the last seat taken; each tab's reload finds its own.
    expect(new SeatStore(browser, tabA).get(seat.code)?.seat).toBe(2);
    expect(new SeatStore(browser, tabB).get(seat.code)?.seat).toBe(3);
    // A tab reopened after a crash has no storage of its own: the browser's seat.
    expect(new SeatStore(browser, new MemoryStorage()).get(seat.code)?.seat).toBe(3);
    new SeatStore(browser, tabA).forget(seat.code);
    expect(new SeatStore(browser, tabA).get(seat.code)).toBeNull();
  });

  it("ignores corrupt or foreign data", () => {
    const storage = new MemoryStorage();
    storage.setItem(STORAGE_KEY, "{not json");
    expect(new SeatStore(storage).all()).toEqual({});
    storage.setItem(STORAGE_KEY, JSON.stringify({ K7XQ2MPAHR: { ...seat, seat: "2" }, X: { ...seat, code: "Y" } }));
    expect(new SeatStore(storage).all()).toEqual({});
  });

  it("reads the table of the address", () => {
    expect(codeFromHash(hashOf("K7XQ2MPAHR"))).toBe("K7XQ2MPAHR");
    expect(codeFromHash("#/t/k7xq2mpahr")).toBe("K7XQ2MPAHR");
    expect(codeFromHash("#/t/short")).toBeNull();
    expect(codeFromHash("")).toBeNull();
  });
});
