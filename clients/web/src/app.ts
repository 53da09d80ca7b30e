// The browser client's screens: start (create / join / resume), lobby, table, game over.
// State lives here; what to show comes from model.ts and texts.ts (pure, unit-tested); every
// element is rebuilt from the state on each change (the DOM is small).
//
// Test hooks are plain attributes of what is shown: `#app[data-screen]`, the table's
// `data-version`, `data-your-seat`, `data-turn-seat`, `data-my-turn`, hand tiles'
// `data-low`/`data-high`/`data-legal`, chain tiles' `data-newest`.

import { layoutChain, layoutSpinner, DOUBLE_UNITS, TILE_UNITS, type ArmCell, type ChainCell } from "./chain";
import { CallFailed, DominosApi, watch, webTransport, type Seat } from "./api";
import { h, half, type Child } from "./dom";
import { isNetwork, seatIsGone, type Refusal } from "./errors";
import { Phase, type TableView } from "./gen/dominos/v1/game_pb";
import {
  EMPTY_HISTORY,
  bestPoints,
  chainState,
  clickAction,
  endChoices,
  endedByPlay,
  endedByPlayLine,
  endsModel,
  scoredLine,
  handItems,
  isTerminal,
  isYourTurn,
  lobbyModel,
  handHint,
  nextHistory,
  remainingSeconds,
  revealedHands,
  roundLines,
  roundSummary,
  scoreLines,
  screenOf,
  seatModels,
  statusText,
  stockText,
  teamMembers,
  turnSeat,
  winnerSeat,
  winnerSide,
  winnerTeam,
  type ChainState,
  type EndName,
  type HandItem,
  type History,
  type SeatModel,
} from "./model";
import {
  PRESETS,
  defaultPick,
  handChoices,
  hasStock,
  normalisePick,
  playsInTeams,
  presetInfo,
  presetLine,
  presetName,
  ruleChoiceOf,
  rulesLines,
  seatChoices,
  targetChoices,
  teamChoices,
  type PresetName,
  type RulePick,
} from "./rules";
import { SeatStore, codeFromHash, hashOf, type SavedSeat } from "./seats";
import {
  codeText,
  countdown,
  endChoiceText,
  plusPoints,
  points,
  normaliseCode,
  reasonSentence,
  t,
  teamLabel,
  tileWords,
  winnerSeatText,
  winnerText,
  type Lang,
} from "./texts";

const LANG_KEY = "dominos.lang";
/** Pixels of one chain unit (a tile along the chain is two units wide). */
const UNIT_PX = 30;
const UNIT_GAP_PX = 4;

type ScreenName = "start" | "loading" | "lobby" | "table" | "over" | "closed";

export class App {
  private lang: Lang;
  private screen: ScreenName = "start";
  private seat: SavedSeat | null = null;
  private view: TableView | null = null;
  private receivedAt = 0;
  private history: History = EMPTY_HISTORY;
  private chain: ChainState | null = null;
  private choosing: HandItem | null = null;
  private busy = false;
  private reconnecting = false;
  private notice = "";
  private watcher: AbortController | null = null;
  private readonly seats: SeatStore;
  private readonly api: DominosApi;
  private ticker: number | undefined;
  /** The start screen's choices, kept across redraws. */
  private pick: RulePick = defaultPick("classic");
  private typedName = "";
  private typedCode = "";

  constructor(private readonly root: HTMLElement) {
    this.seats = new SeatStore(localStorage, sessionStorage);
    const saved = localStorage.getItem(LANG_KEY);
    this.lang = saved === "en" ? "en" : "fr";
    this.api = new DominosApi(webTransport(location.origin), (refusal, ms) => {
      this.reconnecting = true;
      this.setNotice(this.retryText(refusal, ms));
    });
    window.addEventListener("resize", () => this.render());
    window.addEventListener("hashchange", () => void this.route());
  }

  async route(): Promise<void> {
    const code = codeFromHash(location.hash);
    const saved = code !== null ? this.seats.get(code) : null;
    if (saved === null) {
      if (this.seat === null) this.showStart();
      return;
    }
    if (this.seat?.code === saved.code) return;
    await this.resume(saved);
  }

  // -- state changes ------------------------------------------------------------------------

  private showStart(notice = ""): void {
    this.stopWatching();
    this.seat = null;
    this.view = null;
    this.chain = null;
    this.history = EMPTY_HISTORY;
    this.screen = "start";
    this.notice = notice;
    if (location.hash !== "") history.replaceState(null, "", location.pathname + location.search);
    this.render();
  }

  private async resume(saved: SavedSeat): Promise<void> {
    this.enterSeat(saved);
    this.screen = "loading";
    this.render();
    try {
      const view = await this.api.getTableView(saved);
      if (view !== undefined) this.applyView(view);
      this.startWatching();
    } catch (error) {
      this.fail(error);
    }
  }

  private enterSeat(saved: SavedSeat): void {
    this.stopWatching();
    this.seat = saved;
    this.view = null;
    this.chain = null;
    this.history = loadHistory(saved.tableId);
    this.choosing = null;
    this.notice = "";
    if (location.hash !== hashOf(saved.code)) history.replaceState(null, "", hashOf(saved.code));
  }

  /** Keeps `view` if it is newer than the one shown (views never go back, also across
   * reconnections), then redraws. */
  private applyView(view: TableView): void {
    if (this.seat === null) return;
    if (this.view !== null && view.version <= this.view.version) return;
    this.view = view;
    this.receivedAt = performance.now();
    this.chain = chainState(view, this.chain);
    this.history = nextHistory(this.history, view);
    saveHistory(view.tableId, this.history);
    if (this.choosing !== null && !isYourTurn(view)) this.choosing = null;
    const screen = screenOf(view);
    this.screen = screen;
    if (isTerminal(view)) this.seats.forget(this.seat.code);
    this.render();
  }

  private startWatching(): void {
    const seat = this.seat;
    if (seat === null) return;
    const controller = new AbortController();
    this.watcher = controller;
    void watch(
      this.api,
      seat,
      {
        onView: (view) => {
          if (this.reconnecting) this.notice = "";
          this.reconnecting = false;
          this.applyView(view);
        },
        onReconnecting: (refusal, ms) => {
          this.reconnecting = true;
          this.setNotice(this.retryText(refusal, ms));
        },
      },
      controller.signal,
    ).then((end) => {
      if (this.watcher !== controller) return;
      this.watcher = null;
      if (end.kind === "replaced") this.setNotice(t("replaced", this.lang));
      else if (end.kind === "gone") this.seatGone(end.refusal);
      else if (end.kind === "finished" && this.seat !== null) this.seats.forget(this.seat.code);
    });
  }

  private stopWatching(): void {
    this.watcher?.abort();
    this.watcher = null;
  }

  private seatGone(refusal: Refusal): void {
    if (this.seat !== null) this.seats.forget(this.seat.code);
    this.showStart(`${reasonSentence(refusal.reason, this.lang)} ${t("forgotten", this.lang)}`);
  }

  private fail(error: unknown): void {
    if (!(error instanceof CallFailed)) {
      console.error(error);
      this.setNotice(reasonSentence(null, this.lang));
      return;
    }
    const refusal = error.refusal;
    if (this.seat !== null && seatIsGone(refusal)) {
      this.seatGone(refusal);
      return;
    }
    this.setNotice(
      reasonSentence(refusal.reason, this.lang, {
        limit: refusal.limit,
        retrySeconds: refusal.retryAfterMs !== null ? refusal.retryAfterMs / 1000 : null,
        network: isNetwork(refusal),
      }),
    );
    if (this.screen === "loading") this.showStart(this.notice);
  }

  private retryText(refusal: Refusal, ms: number): string {
    if (refusal.reason === "RATE_LIMITED")
      return reasonSentence(refusal.reason, this.lang, { limit: refusal.limit, retrySeconds: ms / 1000 });
    return t("reconnecting", this.lang, { s: Math.max(1, Math.ceil(ms / 1000)) });
  }

  private setNotice(text: string): void {
    this.notice = text;
    this.render();
  }

  /** Runs one command: one at a time, its refusal told in words, its view applied. */
  private async command(run: () => Promise<TableView | undefined>): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.notice = "";
    this.render();
    try {
      const view = await run();
      if (this.reconnecting) this.notice = "";
      this.reconnecting = false;
      if (view !== undefined) this.applyView(view);
    } catch (error) {
      this.fail(error);
    } finally {
      this.busy = false;
      this.render();
    }
  }

  private seatRef(): Seat {
    if (this.seat === null) throw new Error("no seat");
    return this.seat;
  }

  private version(): bigint {
    return this.view?.version ?? 0n;
  }

  // -- actions ------------------------------------------------------------------------------

  private async create(name: string): Promise<void> {
    await this.command(async () => {
      const pick = normalisePick(this.pick);
      const rules = ruleChoiceOf(pick);
      // Classic: exactly the request of before rule sets (target 0 is its default, 100).
      const target = rules === undefined && pick.target === 100 ? 0 : pick.target;
      const created = await this.api.createTable(name.trim(), target, rules);
      const saved: SavedSeat = {
        code: normaliseCode(created.invitationCode),
        tableId: created.tableId,
        seat: created.seat,
        token: created.seatToken,
        name: name.trim(),
      };
      this.seats.save(saved);
      this.enterSeat(saved);
      this.startWatching();
      return created.view;
    });
  }

  private async join(typedCode: string, name: string): Promise<void> {
    const code = normaliseCode(typedCode);
    const held = this.seats.get(code);
    // Joining a table where this browser holds a seat under the same name takes that seat
    // back; under another name it is another player on the same machine.
    if (held !== null && held.name === name.trim()) {
      await this.resume(held);
      return;
    }
    await this.command(async () => {
      const joined = await this.api.joinTable(code, name.trim());
      const saved: SavedSeat = {
        code,
        tableId: joined.tableId,
        seat: joined.seat,
        token: joined.seatToken,
        name: name.trim(),
      };
      this.seats.save(saved);
      this.enterSeat(saved);
      this.startWatching();
      return joined.view;
    });
  }

  private async leave(): Promise<void> {
    const seat = this.seat;
    if (seat === null) return;
    // The seat's stream ends TOKEN_INVALID once the seat is freed: stop it first, so that
    // leaving is not mistaken for losing the seat.
    this.stopWatching();
    let left = false;
    await this.command(async () => {
      await this.api.leaveTable(seat, this.version());
      left = true;
      this.seats.forget(seat.code);
      this.showStart();
      return undefined;
    });
    if (!left && this.seat === seat) this.startWatching();
  }

  private play(item: HandItem, end: EndName): void {
    this.choosing = null;
    void this.command(() => this.api.playTile(this.seatRef(), item, end, this.version()));
  }

  private clickTile(item: HandItem): void {
    if (this.busy || this.view === null || !isYourTurn(this.view)) return;
    const action = clickAction(item);
    if (action.kind === "play") this.play(item, action.end);
    else if (action.kind === "choose") {
      this.choosing = item;
      this.render();
    }
  }

  private toggleLang(): void {
    this.lang = this.lang === "fr" ? "en" : "fr";
    localStorage.setItem(LANG_KEY, this.lang);
    this.notice = "";
    this.render();
  }

  // -- rendering ----------------------------------------------------------------------------

  render(): void {
    const lang = this.lang;
    document.documentElement.lang = lang;
    this.root.dataset.screen = this.screen;
    this.root.dataset.lang = lang;
    this.root.dataset.busy = String(this.busy);
    const view = this.view;
    const myTurn = view !== null && this.screen === "table" && isYourTurn(view);
    this.root.dataset.myTurn = String(myTurn);
    this.root.classList.toggle("your-turn", myTurn);
    document.title = myTurn ? `● ${t("yourTurn", lang)} — ${t("title", lang)}` : t("title", lang);
    const body = this.body();
    const children: Child[] = [
      h(
        "header",
        { class: "bar" },
        h("h1", {}, t("title", lang)),
        this.seat !== null ? h("span", { class: "who" }, this.seat.name) : null,
        h("button", { id: "lang", type: "button", onclick: () => this.toggleLang() }, t("language", lang)),
      ),
      this.notice !== "" ? h("p", { id: "notice", role: "status", class: "notice" }, this.notice) : null,
      body,
    ];
    this.root.replaceChildren(...children.filter((c): c is Node => c instanceof Node));
    this.tick();
  }

  private body(): HTMLElement {
    switch (this.screen) {
      case "start":
        return this.startScreen();
      case "loading":
        return h("main", { class: "loading" }, t("working", this.lang));
      case "lobby":
        return this.lobbyScreen();
      case "table":
        return this.tableScreen();
      case "over":
        return this.overScreen();
      case "closed":
        return h(
          "main",
          { class: "closed" },
          h("p", {}, t("closed", this.lang)),
          h("button", { id: "home", type: "button", onclick: () => this.showStart() }, t("newGame", this.lang)),
        );
    }
  }

  private startScreen(): HTMLElement {
    const lang = this.lang;
    const nameInput = h("input", {
      id: "name",
      name: "name",
      maxlength: 24,
      autocomplete: "nickname",
      required: true,
      oninput: (event: Event) => (this.typedName = (event.target as HTMLInputElement).value),
    });
    nameInput.value = this.typedName;
    const codeInput = h("input", {
      id: "code-input",
      name: "code",
      maxlength: 16,
      autocomplete: "off",
      spellcheck: "false",
      oninput: (event: Event) => (this.typedCode = (event.target as HTMLInputElement).value),
    });
    codeInput.value = this.typedCode;
    const disabled = this.busy;
    const saved = Object.values(this.seats.all());
    return h(
      "main",
      { class: "start" },
      h("p", { class: "tagline" }, t("tagline", lang)),
      h("label", { for: "name" }, t("yourName", lang)),
      nameInput,
      h(
        "div",
        { class: "choices" },
        h(
          "form",
          {
            id: "create-form",
            onsubmit: (event: Event) => {
              event.preventDefault();
              void this.create(nameInput.value);
            },
          },
          this.ruleChoices(),
          h("button", { id: "create", type: "submit", disabled }, t("create", lang)),
        ),
        h(
          "form",
          {
            id: "join-form",
            onsubmit: (event: Event) => {
              event.preventDefault();
              void this.join(codeInput.value, nameInput.value);
            },
          },
          h("label", { for: "code-input" }, t("code", lang)),
          codeInput,
          h("button", { id: "join", type: "submit", disabled }, t("join", lang)),
        ),
      ),
      saved.length > 0
        ? h(
            "section",
            { class: "saved" },
            h("h2", {}, t("resumeTitle", lang)),
            h(
              "ul",
              {},
              ...saved.map((s) =>
                h(
                  "li",
                  {},
                  h(
                    "button",
                    { type: "button", class: "resume", "data-code": s.code, onclick: () => void this.resume(s) },
                    `${t("resume", lang)} ${codeText(s.code)} (${s.name})`,
                  ),
                ),
              ),
            ),
          )
        : null,
    );
  }

  /** The rule set pickers: the preset with its line, then only the choices it offers. */
  private ruleChoices(): HTMLElement {
    const lang = this.lang;
    const pick = normalisePick(this.pick);
    const info = presetInfo(pick.preset);
    const update = (change: Partial<RulePick>) => {
      this.pick = normalisePick({ ...this.pick, ...change });
      this.render();
    };
    const select = (id: string, values: (string | number)[], current: string | number, label: (v: string) => string, onPick: (v: string) => void, disabledValues: string[] = []) => {
      const el = h(
        "select",
        { id, name: id, onchange: (event: Event) => onPick((event.target as HTMLSelectElement).value) },
        ...values.map((v) => {
          const option = h("option", { value: v, disabled: disabledValues.includes(String(v)) }, label(String(v)));
          option.selected = String(v) === String(current);
          return option;
        }),
      );
      return el;
    };
    const field = (id: string, label: string, control: HTMLElement) =>
      h("div", { class: "field" }, h("label", { for: id }, label), control);
    const seats = seatChoices(info);
    const hands = handChoices(info, pick.seats);
    const teams = teamChoices(info, pick.seats, pick.handSize);
    const targets = targetChoices(info);
    return h(
      "fieldset",
      { class: "rule-choice" },
      field(
        "preset",
        t("gameLabel", lang),
        select(
          "preset",
          PRESETS.map((p) => p.name),
          pick.preset,
          (v) => {
            const p = presetInfo(v as PresetName);
            return p.playable ? presetName(p.name, lang) : `${presetName(p.name, lang)} ${t("soon", lang)}`;
          },
          (v) => {
            this.pick = defaultPick(v as PresetName);
            this.render();
          },
          PRESETS.filter((p) => !p.playable).map((p) => p.name),
        ),
      ),
      h("p", { id: "preset-line", class: "preset-line" }, presetLine(pick.preset, lang)),
      seats.length > 1
        ? field("seats", t("seatsLabel", lang), select("seats", seats, pick.seats, (v) => t("seatsOption", lang, { n: v }), (v) => update({ seats: Number(v) })))
        : null,
      hands.length > 1
        ? field("hand-size", t("handLabel", lang), select("hand-size", hands, pick.handSize, (v) => t("handOption", lang, { n: v }), (v) => update({ handSize: Number(v) })))
        : null,
      teams.length > 1
        ? field("teams", t("teamsLabel", lang), select("teams", teams.map(String), String(pick.teams), (v) => t(v === "true" ? "teamsYes" : "teamsNo", lang), (v) => update({ teams: v === "true" })))
        : null,
      info.turnChoices !== null
        ? field("turn", t("turnLabel", lang), select("turn", [...info.turnChoices], pick.turnSeconds, (v) => t("turnOption", lang, { n: v }), (v) => update({ turnSeconds: Number(v) })))
        : null,
      targets.length > 1
        ? field("start-target", t("target", lang), select("start-target", targets, pick.target, (v) => t("targetPoints", lang, { n: v }), (v) => update({ target: Number(v) })))
        : h("p", { id: "start-target-fixed" }, `${t("target", lang)} : ${t("targetPoints", lang, { n: pick.target })}`),
    );
  }

  private lobbyScreen(): HTMLElement {
    const lang = this.lang;
    const view = this.view!;
    const model = lobbyModel(view, lang);
    const seats = seatModels(view, lang);
    const select = h(
      "select",
      {
        id: "target",
        disabled: !model.youAreHost || this.busy,
        onchange: (event: Event) => {
          const target = Number((event.target as HTMLSelectElement).value);
          void this.command(() => this.api.setTarget(this.seatRef(), target, this.version()));
        },
      },
      ...model.targets.map((n) => {
        const option = h("option", { value: n }, t("targetPoints", lang, { n }));
        option.selected = n === view.target;
        return option;
      }),
    );
    return h(
      "main",
      { class: "lobby", "data-version": view.version.toString(), "data-your-seat": view.yourSeat },
      h("h2", {}, t("lobbyTitle", lang)),
      h("p", {}, model.share),
      h("p", { id: "code", class: "code", "data-code": this.seat?.code ?? "" }, codeText(this.seat?.code ?? "")),
      h("ol", { class: "lobby-seats", "data-seats": model.seats }, ...seats.map((s) => this.lobbySeat(s))),
      view.rules !== undefined
        ? h(
            "section",
            { id: "rules", class: "rules", "data-preset": presetInfoName(view) },
            h("h3", {}, t("rulesTitle", lang)),
            ...rulesLines(view.rules, lang).map((line) => h("p", {}, line)),
          )
        : null,
      h("label", { for: "target" }, t("target", lang)),
      select,
      h("p", { id: "lobby-message" }, model.message),
      h(
        "div",
        { class: "actions" },
        model.youAreHost
          ? h(
              "button",
              {
                id: "start",
                type: "button",
                disabled: !model.canStart || this.busy,
                onclick: () => void this.command(() => this.api.startGame(this.seatRef(), this.version())),
              },
              t("start", lang),
            )
          : null,
        h("button", { id: "leave", type: "button", disabled: this.busy, onclick: () => void this.leave() }, t("leave", lang)),
      ),
    );
  }

  private lobbySeat(s: SeatModel): HTMLElement {
    return h(
      "li",
      { class: `seat ${s.occupied ? "occupied" : "free"}`, "data-seat": s.seat },
      h("span", { class: "name" }, s.name),
      s.teams ? ` · ${teamLabel(s.team, this.lang)}` : "",
      s.tags.length > 0 ? ` · ${s.tags.join(" · ")}` : "",
    );
  }

  private tableScreen(): HTMLElement {
    const lang = this.lang;
    const view = this.view!;
    const seats = seatModels(view, lang);
    const turn = turnSeat(view);
    const myTurn = isYourTurn(view);
    const byPosition = (p: string): HTMLElement | null => {
      const seat = seats.find((s) => s.position === p);
      return seat === undefined ? null : this.seatBox(seat);
    };
    const stock = stockText(view, lang);
    const summary = view.phase === Phase.ROUND_OVER ? this.summaryPanel(view) : null;
    return h(
      "main",
      {
        class: "table",
        "data-version": view.version.toString(),
        "data-your-seat": view.yourSeat,
        "data-turn-seat": turn ?? "",
        "data-phase": Phase[view.phase] ?? String(view.phase),
        "data-round": view.roundNumber,
      },
      h(
        "section",
        { class: "board" },
        byPosition("top"),
        byPosition("left"),
        this.chainBox(view),
        byPosition("right"),
        h(
          "div",
          { class: `me ${myTurn ? "turn" : ""}` },
          byPosition("bottom"),
          h("p", { id: "status", class: myTurn ? "your-turn-banner" : "" }, statusText(view, lang), h("span", { id: "clock" })),
          this.handBox(view),
        ),
      ),
      h(
        "aside",
        { class: "side" },
        h(
          "section",
          { class: "scores" },
          h("h2", {}, `${t("score", lang)} · ${t("target", lang)} ${view.target}`),
          ...scoreLines(view, lang).map((line) => h("p", { id: line.id, class: "score-line" }, line.text)),
          view.roundNumber > 0 ? h("p", {}, t("round", lang, { n: view.roundNumber })) : null,
          stock !== null ? h("p", { id: "stock", "data-stock": view.stockSize }, stock) : null,
        ),
        h(
          "section",
          { class: "moves" },
          h("h2", {}, t("movesTitle", lang)),
          this.history.moves.length === 0
            ? h("p", {}, t("noMoves", lang))
            : h("ol", { id: "moves" }, ...this.history.moves.map((m) => h("li", {}, m.text[lang]))),
        ),
        h(
          "section",
          { class: "rounds" },
          h("h2", {}, t("roundsTitle", lang)),
          this.history.rounds.length === 0
            ? h("p", {}, t("noRounds", lang))
            : h("ol", { id: "rounds" }, ...roundLines(this.history, view, lang).map((line) => h("li", {}, line))),
        ),
      ),
      summary,
    );
  }

  private seatBox(s: SeatModel): HTMLElement {
    return h(
      "div",
      {
        class: `seat ${s.position} ${s.teams ? `team-${s.team}` : "solo"} ${s.isTurn ? "turn" : ""} ${s.connected ? "" : "away"}`,
        "data-seat": s.seat,
        "data-position": s.position,
        "data-tiles": s.tileCount,
        "data-connected": String(s.connected),
      },
      h("span", { class: "name" }, s.name),
      h("span", { class: "tags" }, [...(s.teams ? [teamLabel(s.team, this.lang)] : []), ...s.tags].join(" · ")),
      s.teams ? null : h("span", { class: "seat-score", "data-score": s.score }, points(s.score, this.lang)),
      s.you ? null : h("span", { class: "count" }, s.tilesText),
      s.you ? null : h("span", { class: "backs", "aria-hidden": "true" }, ...Array.from({ length: s.tileCount }, () => h("i"))),
      s.passes !== "" ? h("span", { class: "passes" }, s.passes) : null,
    );
  }

  private chainBox(view: TableView): HTMLElement {
    const lang = this.lang;
    const state = this.chain;
    const box = h("div", { id: "chain", class: "chain" });
    if (state === null || state.chain.length === 0) {
      box.append(h("p", { class: "empty" }, t("emptyChain", lang)));
      return box;
    }
    const width = Math.max(200, Math.min(window.innerWidth, 1400) - 520);
    const ends = endsModel(view, lang);
    const scored = scoredLine(view, lang);
    if (state.spinner !== null) {
      box.append(this.spinnerBox(state, width));
    } else {
      const units = Math.max(TILE_UNITS, Math.floor(width / (UNIT_PX + UNIT_GAP_PX)));
      for (const row of layoutChain(state.chain, state.newest, units)) {
        box.append(h("div", { class: "chain-row" }, ...row.map((cell) => this.lineTile(cell, false))));
      }
    }
    if (ends !== null) {
      box.append(
        h(
          "p",
          { id: "ends", class: "ends", "data-total": ends.total, "data-ends": ends.ends.map((e) => `${e.end}:${e.number}`).join(" ") },
          ends.text,
        ),
      );
    }
    if (scored !== null) box.append(h("p", { id: "scored", class: "scored", role: "status" }, scored));
    return box;
  }

  /** A tile of the line: along it, a double across; the spinner outlined. */
  private lineTile(cell: ChainCell, spinner: boolean, column?: number): HTMLElement {
    return h(
      "span",
      {
        class: `domino ${cell.double ? "double" : "along"} ${cell.newest ? "newest" : ""} ${spinner ? "spinner" : ""}`,
        "data-left": cell.left,
        "data-right": cell.right,
        "data-newest": String(cell.newest),
        "data-units": cell.units === DOUBLE_UNITS ? 1 : 2,
        "data-arm": "line",
        ...(spinner ? { "data-spinner": "true" } : {}),
        ...(column !== undefined ? { style: `grid-column: ${column}; grid-row: 2` } : {}),
        title: tileWords(cell.left, cell.right, this.lang),
      },
      half(cell.left),
      half(cell.right),
    );
  }

  /** All fives: the line in one row (the spinner in yellow), its short sides as columns
   * above and below the spinner; the line shrinks to fit, then scrolls. */
  private spinnerBox(state: ChainState, width: number): HTMLElement {
    const layout = layoutSpinner(state.chain, state.spinner!, state.up, state.down, {
      arm: state.newestArm,
      index: state.newest,
    });
    const unit = Math.max(16, Math.min(UNIT_PX, Math.floor(width / Math.max(1, layout.units)) - UNIT_GAP_PX));
    const armTile = (cell: ArmCell, arm: "up" | "down") =>
      h(
        "span",
        {
          // Standing along its arm (a double lying across it); the half facing the spinner
          // toward it: below on the upper side, above on the lower one.
          class: `domino ${cell.double ? "along" : "double"} arm-tile ${cell.newest ? "newest" : ""}`,
          "data-arm": arm,
          "data-inner": cell.inner,
          "data-outer": cell.outer,
          "data-newest": String(cell.newest),
          title: tileWords(cell.inner, cell.outer, this.lang),
        },
        ...(arm === "up" ? [half(cell.outer), half(cell.inner)] : [half(cell.inner), half(cell.outer)]),
      );
    const column = layout.spinner + 1;
    return h(
      "div",
      {
        class: "spinner-layout",
        style: `--unit: ${unit}px; grid-template-columns: repeat(${layout.line.length}, auto)`,
        "data-spinner-index": layout.spinner,
      },
      h("div", { class: "arm up", "data-arm": "up", style: `grid-column: ${column}; grid-row: 1` }, ...layout.up.map((c) => armTile(c, "up"))),
      ...layout.line.map((cell, i) => this.lineTile(cell, i === layout.spinner, i + 1)),
      h("div", { class: "arm down", "data-arm": "down", style: `grid-column: ${column}; grid-row: 3` }, ...layout.down.map((c) => armTile(c, "down"))),
    );
  }

  private handBox(view: TableView): HTMLElement {
    const lang = this.lang;
    const items = handItems(view);
    const myTurn = isYourTurn(view);
    const tiles = items.map((item) => {
      const legal = myTurn && item.ends.length > 0;
      const best = legal ? bestPoints(item) : 0;
      return h(
        "button",
        {
          type: "button",
          class: `domino tile ${legal ? "legal" : ""} ${this.choosing === item ? "chosen" : ""}`,
          "data-low": item.low,
          "data-high": item.high,
          "data-legal": String(legal),
          "aria-label": tileWords(item.low, item.high, lang),
          "data-points": best,
          disabled: !legal || this.busy,
          onclick: () => this.clickTile(item),
        },
        half(item.low),
        half(item.high),
        best > 0 ? h("span", { class: "points-badge", "aria-hidden": "true" }, plusPoints(best)) : null,
      );
    });
    const chosen = this.choosing;
    const choices = chosen !== null ? endChoices(view, chosen) : [];
    const choice =
      chosen !== null && choices.length > 1
        ? h(
            "div",
            { id: "end-choice", class: "end-choice" },
            h("p", {}, t(choices.length > 2 ? "pickEndMany" : "pickEnd", lang)),
            ...choices.map((c) =>
              h(
                "button",
                { type: "button", "data-end": c.end, "data-points": c.points ?? "", onclick: () => this.play(chosen, c.end) },
                endChoiceText(c.end, c.number, c.points, lang),
              ),
            ),
            h("button", { type: "button", "data-end": "cancel", onclick: () => { this.choosing = null; this.render(); } }, t("cancel", lang)),
          )
        : null;
    const hint: Child = myTurn ? h("p", { class: "hint" }, t(handHint(view), lang)) : null;
    return h(
      "div",
      { class: "hand-box" },
      h("h2", {}, t("hand", lang)),
      h("div", { id: "hand", class: "hand", "data-count": items.length }, ...tiles),
      choice,
      hint,
      myTurn
        ? h(
            "button",
            {
              id: "pass",
              type: "button",
              disabled: !view.canPass || this.busy,
              onclick: () => void this.command(() => this.api.pass(this.seatRef(), this.version())),
            },
            t("pass", lang),
          )
        : null,
      myTurn && hasStock(view)
        ? h(
            "button",
            {
              id: "draw",
              type: "button",
              disabled: !view.canDraw || this.busy,
              onclick: () => void this.command(() => this.api.drawTile(this.seatRef(), this.version())),
            },
            t("draw", lang),
          )
        : null,
    );
  }

  private summaryPanel(view: TableView): HTMLElement {
    const lang = this.lang;
    return h(
      "section",
      { id: "round-summary", class: "summary", role: "dialog" },
      ...roundSummary(view, lang).map((line) => h("p", {}, line)),
      h("h3", {}, t("handsLeft", lang)),
      h(
        "ul",
        { class: "revealed" },
        ...revealedHands(view).map((hand) =>
          h(
            "li",
            { "data-seat": hand.seat },
            h("span", { class: "name" }, hand.name),
            ...hand.tiles.map(([a, b]) => h("span", { class: "domino small along" }, half(a), half(b))),
            ` (${hand.points})`,
          ),
        ),
      ),
      h("p", { id: "break-clock" }),
    );
  }

  private overScreen(): HTMLElement {
    const lang = this.lang;
    const view = this.view!;
    const team = winnerTeam(view);
    const solo = winnerSeat(view);
    const side = winnerSide(view);
    const scoreA = view.scoreTeamA;
    const scoreB = view.scoreTeamB;
    const you = view.yourSeat % 2 === 0 ? "A" : "B";
    const winner =
      team !== null && playsInTeams(view)
        ? winnerText(team, teamMembers(view, team), team === "A" ? scoreA : scoreB, team === "A" ? scoreB : scoreA, team === you, lang)
        : solo !== null
          ? winnerSeatText(solo.name, solo.score, solo.others, solo.you, lang)
          : null;
    return h(
      "main",
      {
        class: "over",
        "data-version": view.version.toString(),
        "data-your-seat": view.yourSeat,
        "data-winner": team ?? (side !== null ? String(side) : ""),
        "data-winner-side": side ?? "",
        "data-you-won": String(team !== null ? team === you : (solo?.you ?? false)),
      },
      h("h2", {}, t("gameOver", lang)),
      winner !== null ? h("p", { id: "winner" }, winner) : null,
      endedByPlay(view) !== null ? h("p", { id: "ended-by-play", class: "last-round" }, endedByPlayLine(view, lang)) : null,
      ...roundSummary(view, lang).map((line) => h("p", { class: "last-round" }, line)),
      h("ol", { id: "rounds" }, ...roundLines(this.history, view, lang).map((line) => h("li", {}, line))),
      h("button", { id: "home", type: "button", onclick: () => this.showStart() }, t("newGame", lang)),
    );
  }

  /** Redraws the countdowns only, every 250 ms while a clock runs. */
  private tick(): void {
    window.clearTimeout(this.ticker);
    const view = this.view;
    if (view === null || (this.screen !== "table" && this.screen !== "lobby")) return;
    const left = remainingSeconds(view, this.receivedAt, performance.now());
    if (left === null) return;
    const clock = this.root.querySelector("#clock");
    if (clock !== null) clock.textContent = view.phase === Phase.PLAYING ? ` — ${countdown(left)}` : "";
    const breakClock = this.root.querySelector("#break-clock");
    if (breakClock !== null) breakClock.textContent = t("nextRound", this.lang, { time: countdown(left) });
    this.ticker = window.setTimeout(() => this.tick(), 250);
  }
}

function presetInfoName(view: TableView): string {
  return PRESETS.find((p) => p.preset === view.rules?.preset)?.name ?? "classic";
}

function loadHistory(tableId: string): History {
  try {
    const raw = sessionStorage.getItem(`dominos.history.v2.${tableId}`);
    if (raw === null) return EMPTY_HISTORY;
    const parsed = JSON.parse(raw) as History;
    return Array.isArray(parsed.moves) && Array.isArray(parsed.rounds) ? parsed : EMPTY_HISTORY;
  } catch {
    return EMPTY_HISTORY;
  }
}

function saveHistory(tableId: string, value: History): void {
  try {
    sessionStorage.setItem(`dominos.history.v2.${tableId}`, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the log lives in memory only.
  }
}
