// The seats this browser holds, kept in localStorage per invitation code, so that a reload
// (or a crash) goes straight back to the seat (S4): code → {tableId, seat, token, name}.
// Each tab also keeps its own seats in sessionStorage, which wins on a reload: several tabs
// of one browser at one table (players sharing a machine) each take back their own seat,
// while a tab reopened after a crash finds the browser's. Forgotten when the game is
// finished or closed, or the token is refused. The token is the seat: it stays in this
// browser's storage and is never shown.

export interface SavedSeat {
  code: string;
  tableId: string;
  seat: number;
  token: string;
  name: string;
}

export const STORAGE_KEY = "dominos.seats.v1";

type Store = Pick<Storage, "getItem" | "setItem" | "removeItem">;

function isSeat(value: unknown): value is SavedSeat {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.code === "string" &&
    typeof v.tableId === "string" &&
    typeof v.seat === "number" &&
    typeof v.token === "string" &&
    typeof v.name === "string"
  );
}

export class SeatStore {
  constructor(
    private readonly store: Store,
    private readonly tab: Store | null = null,
  ) {}

  /** Every seat this browser holds (the start screen offers to resume them). */
  all(): Record<string, SavedSeat> {
    return SeatStore.read(this.store);
  }

  private static read(store: Store): Record<string, SavedSeat> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(store.getItem(STORAGE_KEY) ?? "{}");
    } catch {
      return {};
    }
    if (typeof parsed !== "object" || parsed === null) return {};
    const seats: Record<string, SavedSeat> = {};
    for (const [code, seat] of Object.entries(parsed as Record<string, unknown>)) {
      if (isSeat(seat) && seat.code === code) seats[code] = seat;
    }
    return seats;
  }

  /** The seat held at the table of ``code``: this tab's own first, else the browser's. */
  get(code: string): SavedSeat | null {
    const own = this.tab !== null ? SeatStore.read(this.tab)[code] : undefined;
    return own ?? this.all()[code] ?? null;
  }

  save(seat: SavedSeat): void {
    for (const store of this.stores()) {
      const seats = SeatStore.read(store);
      seats[seat.code] = seat;
      store.setItem(STORAGE_KEY, JSON.stringify(seats));
    }
  }

  forget(code: string): void {
    for (const store of this.stores()) {
      const seats = SeatStore.read(store);
      if (!(code in seats)) continue;
      delete seats[code];
      if (Object.keys(seats).length === 0) store.removeItem(STORAGE_KEY);
      else store.setItem(STORAGE_KEY, JSON.stringify(seats));
    }
  }

  private stores(): Store[] {
    return this.tab !== null ? [this.store, this.tab] : [this.store];
  }
}

/** The table of the page's address, `#/t/CODE` (so a reload knows which seat to take back). */
export function codeFromHash(hash: string): string | null {
  const match = /^#\/t\/([A-Za-z0-9]{10})$/.exec(hash);
  return match ? match[1]!.toUpperCase() : null;
}

export function hashOf(code: string): string {
  return `#/t/${code}`;
}
