// The rule sets a host may choose (issue 19, D9; docs/rules.md "Rule sets"): the presets
// with the layouts (seats, tiles each, teams), targets and turn times each allows, the
// request it makes (`RuleChoice`), and the rule set of a view (`RuleSet`) in words. Pure:
// no DOM, unit-tested (test/rules.test.ts).

import {
  BlockedScore,
  BlockedTie,
  DominoScore,
  NextOpener,
  Opener,
  Preset,
  Scoring,
  type RuleSet,
  type TableView,
} from "./gen/dominos/v1/game_pb";
import { type Lang } from "./texts";

export type PresetName = "classic" | "family_draw" | "web_draw" | "web_block" | "web_fives" | "app" | "site";

export interface Layout {
  seats: number;
  handSize: number;
  teams: boolean;
}

export interface PresetInfo {
  name: PresetName;
  preset: Preset;
  /** False for a preset listed but refused by the server (RULES_UNAVAILABLE). */
  playable: boolean;
  /** The layouts its system allows; the first one with `seats === defaultSeats` is the default. */
  layouts: readonly Layout[];
  defaultSeats: number;
  minTarget: number;
  maxTarget: number;
  targetStep: number;
  defaultTarget: number;
  /** The turn times the table may choose (seconds), or null: the operator's. */
  turnChoices: readonly number[] | null;
  defaultTurn: number;
}

const L = (seats: number, handSize: number, teams = false): Layout => ({ seats, handSize, teams });
const DRAW_LAYOUTS = [L(2, 7), L(3, 5), L(4, 5)];

function info(name: PresetName, preset: Preset, layouts: Layout[], over: Partial<PresetInfo> = {}): PresetInfo {
  return {
    name,
    preset,
    playable: true,
    layouts,
    defaultSeats: 4,
    minTarget: 50,
    maxTarget: 500,
    targetStep: 50,
    defaultTarget: 100,
    turnChoices: null,
    defaultTurn: 0,
    ...over,
  };
}

/** The presets, in the order the start screen offers them; classic first (the default). */
export const PRESETS: readonly PresetInfo[] = [
  info("classic", Preset.CLASSIC, [L(4, 7, true)]),
  info("family_draw", Preset.FAMILY_DRAW, DRAW_LAYOUTS, { minTarget: 100, maxTarget: 100 }),
  info("web_draw", Preset.WEB_DRAW, DRAW_LAYOUTS),
  info("web_block", Preset.WEB_BLOCK, [L(2, 7), L(3, 7), L(4, 7)]),
  info("web_fives", Preset.WEB_FIVES, DRAW_LAYOUTS),
  info("app", Preset.APP, [L(4, 7, true), L(4, 5, true), L(2, 7), L(2, 5), L(3, 7), L(3, 5)], { maxTarget: 150 }),
  info("site", Preset.SITE, [L(4, 7, true), L(4, 7), L(2, 7), L(3, 7)], {
    maxTarget: 300,
    turnChoices: [15, 20, 30, 45, 60, 90, 120],
    defaultTurn: 45,
  }),
];

export function presetInfo(name: PresetName): PresetInfo {
  return PRESETS.find((p) => p.name === name) ?? PRESETS[0]!;
}

export function presetByEnum(preset: Preset): PresetInfo {
  return PRESETS.find((p) => p.preset === preset) ?? PRESETS[0]!;
}

/** What the host picked on the start screen. */
export interface RulePick {
  preset: PresetName;
  seats: number;
  handSize: number;
  teams: boolean;
  turnSeconds: number;
  target: number;
}

function steps(min: number, max: number, step: number): number[] {
  const out: number[] = [];
  for (let n = min; n <= max; n += Math.max(1, step)) out.push(n);
  return out;
}

/** The seat counts of a preset, ascending. */
export function seatChoices(p: PresetInfo): number[] {
  return [...new Set(p.layouts.map((l) => l.seats))].sort((a, b) => a - b);
}

/** The hand sizes at `seats`, ascending. */
export function handChoices(p: PresetInfo, seats: number): number[] {
  return [...new Set(p.layouts.filter((l) => l.seats === seats).map((l) => l.handSize))].sort((a, b) => a - b);
}

/** Teams or not at `seats` × `handSize`, teams first. */
export function teamChoices(p: PresetInfo, seats: number, handSize: number): boolean[] {
  const found = p.layouts.filter((l) => l.seats === seats && l.handSize === handSize).map((l) => l.teams);
  return [true, false].filter((t) => found.includes(t));
}

export function targetChoices(p: PresetInfo): number[] {
  return steps(p.minTarget, p.maxTarget, p.targetStep);
}

/** The preset's defaults: its first layout at its default seat count, its default target. */
export function defaultPick(name: PresetName): RulePick {
  const p = presetInfo(name);
  const layout = p.layouts.find((l) => l.seats === p.defaultSeats) ?? p.layouts[0]!;
  const target = Math.min(p.maxTarget, Math.max(p.minTarget, p.defaultTarget));
  return { preset: p.name, ...layout, turnSeconds: p.defaultTurn, target };
}

/** `pick` made valid after one of its choices changed: each later choice kept when still
 * offered, else the first offered (the preset's own where it has one). */
export function normalisePick(pick: RulePick): RulePick {
  const p = presetInfo(pick.preset);
  const seatsOk = seatChoices(p);
  const seats = seatsOk.includes(pick.seats) ? pick.seats : (seatsOk.includes(p.defaultSeats) ? p.defaultSeats : seatsOk[0]!);
  const hands = handChoices(p, seats);
  const preferred = p.layouts.find((l) => l.seats === seats)!.handSize;
  const handSize = hands.includes(pick.handSize) ? pick.handSize : preferred;
  const teamsOk = teamChoices(p, seats, handSize);
  const teams = teamsOk.includes(pick.teams) ? pick.teams : teamsOk[0]!;
  const turns = p.turnChoices ?? [];
  const turnSeconds = turns.length === 0 ? 0 : turns.includes(pick.turnSeconds) ? pick.turnSeconds : p.defaultTurn;
  const targets = targetChoices(p);
  const target = targets.includes(pick.target) ? pick.target : targets.includes(p.defaultTarget) ? p.defaultTarget : targets[0]!;
  return { preset: p.name, seats, handSize, teams, turnSeconds, target };
}

/** The CreateTable `rules` for `pick`: undefined for classic (the default game, exactly as
 * before rule sets); otherwise the preset with every choice spelt out. */
export function ruleChoiceOf(pick: RulePick):
  | { preset: Preset; seats: number; handSize: number; turnSeconds: number; teams?: boolean }
  | undefined {
  const p = presetInfo(pick.preset);
  if (p.name === "classic") return undefined;
  const choice: { preset: Preset; seats: number; handSize: number; turnSeconds: number; teams?: boolean } = {
    preset: p.preset,
    seats: pick.seats,
    handSize: pick.handSize,
    turnSeconds: pick.turnSeconds,
  };
  if (teamChoices(p, pick.seats, pick.handSize).length > 1) choice.teams = pick.teams;
  return choice;
}

// -- the rule set of a view ------------------------------------------------------------------

/** Seats at the table: the rule set's, else one per seat of the view (four for old servers). */
export function seatCount(view: TableView): number {
  const n = view.rules?.seats ?? 0;
  if (n >= 2) return n;
  return view.seats.length >= 2 ? view.seats.length : 4;
}

/** Whether partners play together (a view without rules is the default game: teams). */
export function playsInTeams(view: TableView): boolean {
  return view.rules === undefined ? true : view.rules.teams;
}

/** Whether the table plays all fives (seed 002): the spinner, points scored at once. */
export function isFives(view: TableView): boolean {
  return view.rules?.scoring === Scoring.ALL_FIVES;
}

export function hasStock(view: TableView): boolean {
  return view.rules?.draw ?? false;
}

/** The targets the host may set in the lobby: the view's range, else 50-500. */
export function lobbyTargets(view: TableView): number[] {
  const r = view.rules;
  if (r === undefined || r.minTarget === 0 || r.maxTarget < r.minTarget) return steps(50, 500, 50);
  return steps(r.minTarget, r.maxTarget, r.targetStep || 50);
}

const PRESET_WORDS: Readonly<Record<PresetName, Readonly<Record<Lang, { name: string; line: string }>>>> = {
  classic: {
    fr: { name: "Classique", line: "Quatre joueurs en deux équipes, tous les dominos distribués, sans pioche." },
    en: { name: "Classic", line: "Four players in two teams, every tile dealt, no stock." },
  },
  family_draw: {
    fr: { name: "Pioche en famille", line: "2 à 4 joueurs chacun pour soi ; qui ne peut pas jouer pioche ; objectif 100." },
    en: { name: "Family draw", line: "2 to 4 players each for themselves; who cannot play draws; target 100." },
  },
  web_draw: {
    fr: { name: "Pioche", line: "2 à 4 joueurs chacun pour soi, avec pioche ; bloquée, la main la plus légère marque les autres moins la sienne." },
    en: { name: "Draw game", line: "2 to 4 players each for themselves, with a stock; when blocked, the lightest hand scores the others minus its own." },
  },
  web_block: {
    fr: { name: "Bloqué", line: "2 à 4 joueurs chacun pour soi, 7 dominos chacun, sans pioche : qui ne peut pas jouer passe." },
    en: { name: "Block game", line: "2 to 4 players each for themselves, 7 tiles each, no stock: who cannot play passes." },
  },
  web_fives: {
    fr: {
      name: "Tous les 5",
      line: "2 à 4 joueurs, avec pioche ; le premier double est le pivot ; quand les bouts totalisent un multiple de 5, on marque aussitôt.",
    },
    en: {
      name: "All fives",
      line: "2 to 4 players, with a stock; the first double is the spinner; when the ends total a multiple of 5, you score at once.",
    },
  },
  app: {
    fr: { name: "Appli", line: "5 ou 7 dominos, 2 à 4 joueurs (à quatre en équipes), objectif 50 à 150 ; le plus gros double ouvre chaque manche." },
    en: { name: "App game", line: "5 or 7 tiles, 2 to 4 players (four in teams), target 50 to 150; the highest double opens every round." },
  },
  site: {
    fr: { name: "Salon", line: "2 à 4 joueurs, à quatre en paires ou non ; la table choisit le temps de jeu ; le domino rapporte toutes les autres mains." },
    en: { name: "Site game", line: "2 to 4 players, four in pairs or not; the table sets the turn time; going out scores every other hand." },
  },
};

export function presetName(name: PresetName, lang: Lang): string {
  return PRESET_WORDS[name][lang].name;
}

export function presetLine(name: PresetName, lang: Lang): string {
  return PRESET_WORDS[name][lang].line;
}

const COUNT_WORDS: Record<Lang, readonly string[]> = {
  fr: ["zéro", "un", "deux", "trois", "quatre"],
  en: ["zero", "one", "two", "three", "four"],
};

/** 2 → « deux » / "two" (seat counts). */
export function countWord(n: number, lang: Lang): string {
  return COUNT_WORDS[lang][n] ?? String(n);
}

/** « 3 joueurs, chacun pour soi » / « 4 joueurs en deux équipes ». */
export function layoutText(seats: number, teams: boolean, lang: Lang): string {
  if (lang === "fr") return teams ? `${seats} joueurs en deux équipes` : `${seats} joueurs, chacun pour soi`;
  return teams ? `${seats} players in two teams` : `${seats} players, each for themselves`;
}

/** The rule set of a table in words (the lobby): the game and its layout, the stock, who
 * opens, what going out and a blocked round score, the turn time. */
export function rulesLines(r: RuleSet, lang: Lang): string[] {
  const fr = lang === "fr";
  const p = presetByEnum(r.preset);
  const stock = r.draw ? 28 - r.seats * r.handSize - r.setAside : 0;
  const lines = [
    `${presetName(p.name, lang)}${fr ? " : " : ": "}${layoutText(r.seats, r.teams, lang)}, ${r.handSize} ${fr ? "dominos chacun" : "tiles each"}.`,
  ];
  if (r.draw && stock > 0) {
    lines.push(
      fr
        ? `Les ${stock} autres dominos forment la pioche : qui ne peut pas jouer pioche jusqu'à pouvoir poser, et ne passe que pioche vide.`
        : `The other ${stock} tiles are the stock: who cannot play draws until a tile fits, and passes only when it is empty.`,
    );
  } else {
    const aside = 28 - r.seats * r.handSize;
    lines.push(
      fr
        ? `Sans pioche${aside > 0 ? ` (${aside} dominos mis de côté)` : ""} : qui ne peut pas jouer passe.`
        : `No stock${aside > 0 ? ` (${aside} tiles set aside)` : ""}: who cannot play passes.`,
    );
  }
  const first =
    r.opener === Opener.SIX_SIX_HOLDER
      ? fr ? "Le double six ouvre la première manche" : "The double six holder opens the first round"
      : fr ? "Le plus gros double ouvre la première manche (sinon le domino le plus lourd)" : "The highest double opens the first round (else the heaviest tile)";
  const next: Record<number, Record<Lang, string>> = {
    [NextOpener.ROTATION]: { fr: "ensuite chacun son tour", en: "then each seat in turn" },
    [NextOpener.PREVIOUS_WINNER]: { fr: "ensuite le gagnant de la manche précédente", en: "then the previous round's winner" },
    [NextOpener.PREVIOUS_WINNER_ELSE_NEXT]: {
      fr: "ensuite le gagnant de la manche précédente (après une égalité, le joueur suivant)",
      en: "then the previous round's winner (after a tie, the next seat)",
    },
    [NextOpener.OPENER_AGAIN]: { fr: "de même à chaque manche", en: "and so every round" },
  };
  lines.push(`${first}, ${next[r.nextOpener]?.[lang] ?? ""}.`.replace(", .", "."));
  const domino =
    r.dominoScore === DominoScore.ALL_OTHERS
      ? fr ? "toutes les autres mains" : "every other hand"
      : r.teams
        ? fr ? "les mains des adversaires" : "the opponents' hands"
        : fr ? "les mains des autres" : "the other hands";
  const lightest = r.teams ? (fr ? "l'équipe la plus légère" : "the lightest team") : fr ? "la main la plus légère" : "the lightest hand";
  const blocked =
    r.blockedScore === BlockedScore.OTHERS_MINUS_OWN
      ? fr ? "le total des autres moins le sien" : "the others' total minus its own"
      : r.blockedScore === BlockedScore.ALL_TILES
        ? fr ? "tous les points restants, les siens compris" : "every point left, its own included"
        : fr ? "le total des autres" : "the others' total";
  const tie =
    r.blockedTie === BlockedTie.NOBODY
      ? fr ? "à égalité, personne ne marque" : "when level, nobody scores"
      : r.blockedTie === BlockedTie.HAND_OR_NEAREST
        ? fr ? "à égalité, celui qui a ouvert (sinon le plus proche après lui)" : "when level, the opener's side (else the nearest after it)"
        : fr ? "à égalité, qui a posé le dernier domino" : "when level, the side of the last tile";
  lines.push(
    fr
      ? `Qui pose son dernier domino marque ${domino} ; bloquée, ${lightest} marque ${blocked} (${tie}).`
      : `Going out scores ${domino}; when blocked, ${lightest} scores ${blocked} (${tie}).`,
  );
  if (r.scoring === Scoring.ALL_FIVES) {
    lines.push(
      fr
        ? "Tous les 5 : le premier double posé est le pivot ; une fois ses deux grands côtés couverts, on joue aussi sur ses deux petits côtés (jusqu'à quatre bouts). Quand un coup fait totaliser aux bouts ouverts un multiple de 5, son joueur marque aussitôt ce total (un double au bout compte ses deux moitiés). Les points d'une manche sont arrondis au multiple de 5 le plus proche ; atteindre l'objectif en posant un domino termine la partie aussitôt."
        : "All fives: the first double laid is the spinner; once both its long sides are covered, its two short sides open too (up to four ends). When a play makes the open ends total a multiple of 5, its player scores that total at once (a double at an end counts both halves). A round's points are rounded to the nearest multiple of 5; reaching the target by laying a tile ends the game at once.",
    );
  }
  const range =
    r.minTarget === r.maxTarget
      ? fr ? `Objectif : ${r.minTarget} points.` : `Target: ${r.minTarget} points.`
      : fr ? `Objectif : de ${r.minTarget} à ${r.maxTarget} points.` : `Target: ${r.minTarget} to ${r.maxTarget} points.`;
  lines.push(r.turnSeconds > 0 ? `${range} ${fr ? `${r.turnSeconds} s par tour.` : `${r.turnSeconds} s a turn.`}` : range);
  return lines;
}
