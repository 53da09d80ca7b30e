// Every word the browser client shows, in French (the default) and English. Pure functions
// of their arguments: no DOM, no clock, so they are unit-tested (test/texts.test.ts).
//
// - Numbers are said as dominoes players say them: 0 is « blanc » / "blank".
// - French elides « de » and « le/la » before a vowel: « au tour d'Ana », « de Ben »,
//   « l'équipe A ».
// - Passes (R10) read « A passé sur cinq et deux »: highest number first.
// - Refusals are turned into sentences from their machine-readable reason
//   (`google.rpc.ErrorInfo.reason`), never from the server's message; rule ids never appear.
// - Names, codes and server texts are inserted as they are: callers put every string in the
//   DOM with `textContent`, never as markup.

export type Lang = "fr" | "en";
export const LANGS: readonly Lang[] = ["fr", "en"];

type Entry = Readonly<Record<Lang, string>>;

const UI = {
  title: { fr: "Dominos", en: "Dominos" },
  tagline: {
    fr: "28 dominos, de deux à quatre joueurs, en équipes ou chacun pour soi.",
    en: "28 tiles, two to four players, in teams or each for themselves.",
  },
  gameLabel: { fr: "Jeu", en: "Game" },
  seatsLabel: { fr: "Joueurs", en: "Players" },
  seatsOption: { fr: "{n} joueurs", en: "{n} players" },
  handLabel: { fr: "Dominos par joueur", en: "Tiles each" },
  handOption: { fr: "{n} dominos", en: "{n} tiles" },
  teamsLabel: { fr: "Équipes", en: "Teams" },
  teamsYes: { fr: "En deux équipes", en: "In two teams" },
  teamsNo: { fr: "Chacun pour soi", en: "Each for themselves" },
  turnLabel: { fr: "Temps par tour", en: "Turn time" },
  turnOption: { fr: "{n} s", en: "{n} s" },
  soon: { fr: "(bientôt)", en: "(soon)" },
  rulesTitle: { fr: "Règles de la table", en: "Table rules" },
  language: { fr: "English", en: "Français" },
  yourName: { fr: "Votre nom", en: "Your name" },
  create: { fr: "Créer une table", en: "Create a table" },
  code: { fr: "Code d'invitation", en: "Invitation code" },
  join: { fr: "Rejoindre", en: "Join" },
  resumeTitle: { fr: "Vos tables en cours", en: "Your tables in progress" },
  resume: { fr: "Reprendre", en: "Resume" },
  lobbyTitle: { fr: "Salle d'attente", en: "Lobby" },
  shareCode: {
    fr: "Donnez ce code aux {count} autres joueurs :",
    en: "Give this code to the {count} other players:",
  },
  shareCodeOne: {
    fr: "Donnez ce code à l'autre joueur :",
    en: "Give this code to the other player:",
  },
  target: { fr: "Objectif", en: "Target" },
  targetPoints: { fr: "{n} points", en: "{n} points" },
  start: { fr: "Lancer la partie", en: "Start the game" },
  leave: { fr: "Quitter la table", en: "Leave the table" },
  needSeats: {
    fr: "Il faut {count} joueurs assis pour lancer la partie : {n} sur {seats} pour l'instant.",
    en: "{Count} seated players are needed to start: {n} of {seats} so far.",
  },
  readyHost: {
    fr: "Les {count} joueurs sont là : vous pouvez lancer la partie.",
    en: "All {count} players are here: you can start the game.",
  },
  waitHost: {
    fr: "{host} lancera la partie quand vous serez {count}.",
    en: "{host} will start the game once {count} are seated.",
  },
  emptySeat: { fr: "place libre", en: "empty seat" },
  host: { fr: "hôte", en: "host" },
  you: { fr: "vous", en: "you" },
  away: { fr: "absent", en: "away" },
  connected: { fr: "connecté", en: "connected" },
  partner: { fr: "partenaire", en: "partner" },
  opponent: { fr: "adversaire", en: "opponent" },
  round: { fr: "Manche {n}", en: "Round {n}" },
  score: { fr: "Score", en: "Score" },
  hand: { fr: "Votre main", en: "Your hand" },
  emptyChain: {
    fr: "La table est vide : le premier domino peut être n'importe lequel.",
    en: "The table is empty: the first tile may be any tile.",
  },
  yourTurn: { fr: "À vous de jouer", en: "Your turn" },
  pass: { fr: "Passer", en: "Pass" },
  draw: { fr: "Piocher", en: "Draw" },
  mustDraw: {
    fr: "Aucun de vos dominos ne va : piochez.",
    en: "None of your tiles fits: draw.",
  },
  stock: { fr: "Pioche : {tiles}", en: "Stock: {tiles}" },
  mustPass: {
    fr: "Aucun de vos dominos ne va : vous devez passer.",
    en: "None of your tiles fits: you must pass.",
  },
  pickTile: {
    fr: "Cliquez sur un domino en surbrillance pour le poser.",
    en: "Click a highlighted tile to lay it.",
  },
  pickEnd: {
    fr: "Ce domino va des deux côtés : où le poser ?",
    en: "This tile fits both ends: where should it go?",
  },
  onLeft: { fr: "À gauche (sur le {n})", en: "On the left (on the {n})" },
  onRight: { fr: "À droite (sur le {n})", en: "On the right (on the {n})" },
  onUp: { fr: "En haut (sur le {n})", en: "At the top (on the {n})" },
  onDown: { fr: "En bas (sur le {n})", en: "At the bottom (on the {n})" },
  pickEndMany: {
    fr: "Ce domino va sur plusieurs bouts : où le poser ?",
    en: "This tile fits several ends: where should it go?",
  },
  endsTitle: { fr: "Bouts ouverts", en: "Open ends" },
  cancel: { fr: "Annuler", en: "Cancel" },
  movesTitle: { fr: "Coups de la manche", en: "This round's moves" },
  noMoves: { fr: "Aucun coup pour l'instant.", en: "No move yet." },
  roundsTitle: { fr: "Manches jouées", en: "Rounds played" },
  noRounds: { fr: "Aucune manche terminée.", en: "No round finished yet." },
  nextRound: { fr: "Manche suivante dans {time}.", en: "Next round in {time}." },
  gameOver: { fr: "Partie terminée", en: "Game over" },
  newGame: { fr: "Retour à l'accueil", en: "Back to the start" },
  closed: {
    fr: "L'hôte a quitté la table : elle est fermée.",
    en: "The host left the table: it is closed.",
  },
  reconnecting: {
    fr: "Connexion perdue, nouvel essai dans {s} s…",
    en: "Connection lost, retrying in {s} s…",
  },
  replaced: {
    fr: "Cette table est ouverte dans un autre onglet : celui-ci ne reçoit plus rien. Rechargez la page pour jouer ici.",
    en: "This table is open in another tab: this one no longer receives anything. Reload the page to play here.",
  },
  forgotten: {
    fr: "Cette place n'est plus la vôtre : retour à l'accueil.",
    en: "This seat is no longer yours: back to the start.",
  },
  handsLeft: { fr: "Mains restantes", en: "Hands left" },
  tiles: { fr: "{n} domino{s}", en: "{n} tile{s}" },
  working: { fr: "Un instant…", en: "One moment…" },
} as const satisfies Record<string, Entry>;

export type UiKey = keyof typeof UI;

/** The interface string `key` in `lang`, `{name}` placeholders replaced by `values`. */
export function t(key: UiKey, lang: Lang, values: Record<string, string | number> = {}): string {
  return fill(UI[key][lang], values);
}

function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

const NUMBERS: Record<Lang, readonly string[]> = {
  fr: ["blanc", "un", "deux", "trois", "quatre", "cinq", "six"],
  en: ["blank", "one", "two", "three", "four", "five", "six"],
};

/** A domino number in words: 5 → « cinq » / "five"; 0 is « blanc » / "blank". */
export function numberWord(n: number, lang: Lang): string {
  return NUMBERS[lang][n] ?? String(n);
}

/** ["a","b","c"] → « a, b et c » / "a, b and c". */
export function joinWords(words: readonly string[], lang: Lang): string {
  if (words.length <= 1) return words[0] ?? "";
  const last = words[words.length - 1] ?? "";
  return `${words.slice(0, -1).join(", ")}${lang === "fr" ? " et " : " and "}${last}`;
}

const VOWEL_START = /^[aeiouyàâäéèêëîïôöùûüÿæœ]/i;

/** Whether French elides before `word` (« d'Ana », « l'équipe »): a vowel or a silent
 * vowel-like letter first. An h is not elided (names such as Hugo keep « de »). */
export function startsWithVowel(word: string): boolean {
  return VOWEL_START.test(word.normalize("NFC").trimStart());
}

/** French « de » before `word`, elided before a vowel: « de Ben », « d'Ana ». */
export function deName(word: string): string {
  return startsWithVowel(word) ? `d'${word}` : `de ${word}`;
}

/** « 1 domino », « 2 dominos » / "1 tile", "2 tiles" (French: plural from 2). */
export function tilesCount(n: number, lang: Lang): string {
  const plural = lang === "fr" ? n > 1 : n !== 1;
  return t("tiles", lang, { n, s: plural ? "s" : "" });
}

/** « 1 point », « 12 points ». */
export function points(n: number, lang: Lang): string {
  const plural = lang === "fr" ? n > 1 : n !== 1;
  return `${n} point${plural ? "s" : ""}`;
}

/** What a seat passed on this round (R10), highest first: [2, 5] → « A passé sur cinq et
 * deux » / "Passed on five and two"; "" when it has not passed. */
export function passesText(passedOn: readonly number[], lang: Lang): string {
  const numbers = [...new Set(passedOn)].sort((a, b) => b - a);
  if (numbers.length === 0) return "";
  const words = joinWords(
    numbers.map((n) => numberWord(n, lang)),
    lang,
  );
  return lang === "fr" ? `A passé sur ${words}` : `Passed on ${words}`;
}

/** « équipe A » / "team A"; capitalised on request. */
export function teamLabel(team: "A" | "B", lang: Lang, capital = false): string {
  const word = lang === "fr" ? "équipe" : "team";
  return `${capital ? word[0]!.toUpperCase() + word.slice(1) : word} ${team}`;
}

/** « l'équipe A » / "team A": the team as a subject in a sentence. */
export function theTeam(team: "A" | "B", lang: Lang): string {
  return lang === "fr" ? `l'équipe ${team}` : `team ${team}`;
}

/** Whose turn: « À vous de jouer » / « Au tour d'Ana » / "Ben's turn". */
export function turnText(name: string | null, lang: Lang): string {
  if (name === null) return t("yourTurn", lang);
  return lang === "fr" ? `Au tour ${deName(name)}` : `${name}'s turn`;
}

/** Whole seconds rounded up ("0 s" means over); a minute or more as m:ss. */
export function countdown(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds - 1e-9));
  if (whole >= 60) return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  return `${whole} s`;
}

/** An invitation code as read out: two groups of five (ABCDE-23456). */
export function codeText(code: string): string {
  return /^[A-Za-z0-9]{10}$/.test(code) ? `${code.slice(0, 5)}-${code.slice(5)}` : code;
}

/** An invitation code as typed, for the server and as a storage key: spaces and dashes
 * dropped, upper case (the server ignores both, S1). */
export function normaliseCode(typed: string): string {
  return typed.replace(/[\s-]+/g, "").toUpperCase();
}

/** A tile as players say it: « trois-six », a double « double six » / "three-six",
 * "double six" (also the accessible label of a drawn tile). */
export function tileWords(a: number, b: number, lang: Lang): string {
  if (a === b) return `double ${numberWord(a, lang)}`;
  return `${numberWord(a, lang)}-${numberWord(b, lang)}`;
}

// -- moves of the round ------------------------------------------------------------------

// -- all fives (seed 002) ----------------------------------------------------------------

export type EndWord = "left" | "right" | "up" | "down";

const END_WORDS: Readonly<Record<EndWord, Entry>> = {
  left: { fr: "gauche", en: "left" },
  right: { fr: "droite", en: "right" },
  up: { fr: "haut", en: "top" },
  down: { fr: "bas", en: "bottom" },
};

/** An end as one word: « gauche », « droite », « haut », « bas » / "left", "right", "top",
 * "bottom". */
export function endWord(end: EndWord, lang: Lang): string {
  return END_WORDS[end][lang];
}

/** The end chooser's button: « À droite (sur le trois) », under all fives with the
 * points of that placement: « À droite (sur le trois) · +10 ». */
export function endChoiceText(end: EndWord, number: number | null, pts: number | null, lang: Lang): string {
  const key = end === "left" ? "onLeft" : end === "right" ? "onRight" : end === "up" ? "onUp" : "onDown";
  const base = t(key, lang, { n: number === null ? "?" : number });
  return pts === null ? base : `${base} · +${pts}`;
}

/** Points as a signed score: « +10 ». */
export function plusPoints(n: number): string {
  return `+${n}`;
}

/** The open ends and their total (all fives): « Bouts : gauche 3 · droite 5 · haut 4 · bas 4
 * — total 16 (pas un multiple de 5) » / "Ends: left 3 · right 5 · … — total 15". */
export function endsLine(ends: readonly { word: string; number: number }[], total: number, lang: Lang): string {
  const list = ends.map((e) => `${e.word} ${e.number}`).join(" · ");
  const fr = lang === "fr";
  const five = total > 0 && total % 5 === 0;
  const note = five ? (fr ? " (multiple de 5)" : " (a multiple of 5)") : "";
  return fr ? `Bouts : ${list} — total ${total}${note}` : `Ends: ${list} — total ${total}${note}`;
}

/** A play that scored at once: « Ana marque 10 » / "Ana scores 10". */
export function scoredText(name: string, pts: number, lang: Lang): string {
  return lang === "fr" ? `${name} marque ${pts}` : `${name} scores ${pts}`;
}

/** The game won by a play (all fives: reaching the target by laying a tile ends the game at
 * once): « Ana marque 10 et atteint l'objectif de 50 points : la partie s'arrête
 * aussitôt. » */
export function endedByPlayText(name: string, pts: number, target: number, lang: Lang): string {
  return lang === "fr"
    ? `${scoredText(name, pts, lang)} et atteint l'objectif de ${points(target, lang)} : la partie s'arrête aussitôt, sans finir la manche.`
    : `${scoredText(name, pts, lang)} and reaches the ${points(target, lang)} target: the game ends at once, the round unfinished.`;
}

/** The rounding of a round's points (all fives): « Tous les 5 : 12 points arrondis au
 * multiple de 5 le plus proche, 10. » */
export function roundingText(unrounded: number, rounded: number, lang: Lang): string {
  if (unrounded === rounded) {
    return lang === "fr"
      ? `Tous les 5 : ${points(unrounded, lang)}, déjà un multiple de 5.`
      : `All fives: ${points(unrounded, lang)}, already a multiple of 5.`;
  }
  return lang === "fr"
    ? `Tous les 5 : ${points(unrounded, lang)} arrondis au multiple de 5 le plus proche, ${rounded}.`
    : `All fives: ${points(unrounded, lang)} rounded to the nearest multiple of 5, ${rounded}.`;
}

/** One line of the round's log: « Ana a posé six-trois à gauche », « Ben a passé sur cinq
 * et deux », with « (jeu automatique) » when the table played for the seat (R11); a play
 * that scored at once (all fives) adds « : Ana marque 10 ». */
export function moveText(
  move:
    | {
        kind: "played";
        name: string;
        low: number;
        high: number;
        end: "left" | "right" | "up" | "down" | "first";
        auto: "" | "timeout" | "away";
        points?: number;
      }
    | { kind: "passed"; name: string; passedOn: readonly number[]; auto: "" | "timeout" | "away" }
    | { kind: "drew"; name: string; count: number; auto: "" | "timeout" | "away" },
  lang: Lang,
): string {
  const auto =
    move.auto === ""
      ? ""
      : lang === "fr"
        ? move.auto === "away"
          ? " (absent : joué par la table)"
          : " (temps écoulé : joué par la table)"
        : move.auto === "away"
          ? " (away: played by the table)"
          : " (time out: played by the table)";
  if (move.kind === "drew") {
    // How many, never which (the others must not learn the tiles).
    const n = tilesCount(move.count, lang);
    return lang === "fr" ? `${move.name} a pioché ${n}${auto}` : `${move.name} drew ${n}${auto}`;
  }
  if (move.kind === "passed") {
    const on = passesText(move.passedOn, lang);
    if (lang === "fr") return `${move.name} ${on ? on.replace(/^A/, "a") : "a passé"}${auto}`;
    return `${move.name} ${on ? on.replace(/^P/, "p") : "passed"}${auto}`;
  }
  const tile = tileWords(move.low, move.high, lang);
  const scored = move.points !== undefined && move.points > 0 ? ` : ${scoredText(move.name, move.points, lang)}` : "";
  if (lang === "fr") {
    const where = { first: " pour ouvrir", left: " à gauche", right: " à droite", up: " en haut", down: " en bas" }[move.end];
    return `${move.name} a posé ${tile}${where}${auto}${scored}`;
  }
  const where = { first: " to open", left: " on the left", right: " on the right", up: " at the top", down: " at the bottom" }[move.end];
  return `${move.name} laid ${tile}${where}${auto}${scored.replace(" : ", ": ")}`;
}

// -- round summaries -----------------------------------------------------------------------

export interface SummaryInput {
  roundNumber: number;
  /** All fives: the round's points before rounding to the nearest 5 (null: not all fives,
   * or nobody scored). */
  unrounded?: number | null;
  outcome: "domino" | "blocked" | "tie" | "unknown";
  /** The team that scores (teams only; "A" for a teamless table, unused there). */
  scoringTeam: "A" | "B";
  points: number;
  dominoName: string | null;
  dominoTeam: "A" | "B" | null;
  teamAPips: number;
  teamBPips: number;
  /** The hands the domino scored, with their points (DOMINO only). */
  opponents: readonly { name: string; points: number }[];
  /** The rule set's scoring (absent: the default game, R12-R15). */
  rules?: SummaryRules;
}

export interface SummaryRules {
  teams: boolean;
  seats: number;
  stock: boolean;
  domino: "opponents" | "all_others";
  blocked: "others_total" | "others_minus_own" | "all_tiles";
  tie: "last_placer" | "nobody" | "hand_or_nearest";
  /** Who scores as a subject (« l'équipe A », « Ana »), null when nobody scores. */
  scorer: string | null;
  /** The points left per side with its label (« équipe A », « Ana »). */
  sides: readonly { label: string; points: number }[];
  /** The scoring side's own points in hand (blocked rounds). */
  scorerPips: number;
}

const CLASSIC_SUMMARY: Omit<SummaryRules, "scorer" | "sides" | "scorerPips"> = {
  teams: true,
  seats: 4,
  stock: false,
  domino: "opponents",
  blocked: "others_total",
  tie: "last_placer",
};

/** How the round ended and why the scoring side scored (R12-R15 and the rule set's
 * scoring), the tie rule spelt out. */
export function summaryLines(s: SummaryInput, lang: Lang): string[] {
  const rules = s.rules;
  const isClassic =
    rules === undefined ||
    (rules.teams && rules.seats === 4 && !rules.stock && rules.domino === "opponents" &&
      rules.blocked === "others_total" && rules.tie === "last_placer");
  const lines = isClassic ? classicSummary(s, lang) : ruleSetSummary(s, { ...CLASSIC_SUMMARY, ...rules! }, lang);
  if (s.unrounded !== undefined && s.unrounded !== null && s.outcome !== "unknown") {
    lines.push(roundingText(s.unrounded, s.points, lang));
  }
  return lines;
}

function classicSummary(s: SummaryInput, lang: Lang): string[] {
  const fr = lang === "fr";
  const pts = points(s.points, lang);
  const scorer = theTeam(s.scoringTeam, lang);
  if (s.outcome === "domino") {
    const who = `${s.dominoName ?? "?"} (${teamLabel(s.dominoTeam ?? s.scoringTeam, lang)})`;
    const detail = s.opponents.map((o) => `${o.name} ${o.points}`).join(" + ");
    return fr
      ? [
          `Manche ${s.roundNumber} : domino ! ${who} a posé son dernier domino.`,
          `${capitalise(scorer)} marque ${pts} : ce qui reste dans les mains des deux adversaires (${detail}). La main du partenaire ne compte pas.`,
        ]
      : [
          `Round ${s.roundNumber}: domino! ${who} laid their last tile.`,
          `${capitalise(scorer)} scores ${pts}: what is left in both opponents' hands (${detail}). The partner's tiles do not count.`,
        ];
  }
  if (s.outcome === "tie") {
    return fr
      ? [
          `Manche ${s.roundNumber} : bloquée, les quatre joueurs ont passé l'un après l'autre, égalité parfaite.`,
          `Chaque équipe a ${points(s.teamAPips, lang)} en main : la manche revient à l'équipe qui a posé le dernier domino, ${scorer}, qui marque le total de l'autre équipe : ${pts}.`,
        ]
      : [
          `Round ${s.roundNumber}: blocked, the four players passed one after another, a perfect tie.`,
          `Each team holds ${points(s.teamAPips, lang)}: the round goes to the team that laid the last tile, ${scorer}, which scores the other team's total: ${pts}.`,
        ];
  }
  return fr
    ? [
        `Manche ${s.roundNumber} : bloquée, les quatre joueurs ont passé l'un après l'autre.`,
        `Points en main : équipe A ${s.teamAPips}, équipe B ${s.teamBPips}. L'équipe la plus légère, ${scorer}, marque le total de l'autre : ${pts}.`,
      ]
    : [
        `Round ${s.roundNumber}: blocked, the four players passed one after another.`,
        `Points in hand: team A ${s.teamAPips}, team B ${s.teamBPips}. The lighter team, ${scorer}, scores the other team's total: ${pts}.`,
      ];
}

const SEAT_WORDS: Record<Lang, readonly string[]> = {
  fr: ["", "un", "deux", "trois", "quatre"],
  en: ["", "one", "two", "three", "four"],
};

function ruleSetSummary(s: SummaryInput, r: SummaryRules, lang: Lang): string[] {
  const fr = lang === "fr";
  const pts = points(s.points, lang);
  const scorer = r.scorer ?? "?";
  const n = r.seats;
  if (s.outcome === "domino") {
    const who = r.teams ? `${s.dominoName ?? "?"} (${teamLabel(s.dominoTeam ?? s.scoringTeam, lang)})` : (s.dominoName ?? "?");
    const detail = s.opponents.map((o) => `${o.name} ${o.points}`).join(" + ");
    const what =
      r.domino === "all_others"
        ? r.teams
          ? fr ? "ce qui reste dans les trois autres mains, celle du partenaire comprise" : "what is left in the three other hands, the partner's included"
          : fr ? "ce qui reste dans toutes les autres mains" : "what is left in every other hand"
        : r.teams
          ? fr ? "ce qui reste dans les mains des deux adversaires" : "what is left in both opponents' hands"
          : fr ? "ce qui reste dans les autres mains" : "what is left in the other hands";
    return fr
      ? [
          `Manche ${s.roundNumber} : domino ! ${who} a posé son dernier domino.`,
          `${capitalise(scorer)} marque ${pts} : ${what} (${detail}).`,
        ]
      : [
          `Round ${s.roundNumber}: domino! ${who} laid their last tile.`,
          `${capitalise(scorer)} scores ${pts}: ${what} (${detail}).`,
        ];
  }
  const everyone = fr
    ? `${n === 2 ? "les deux" : `les ${SEAT_WORDS.fr[n] ?? n}`} joueurs ont passé l'un après l'autre${r.stock ? ", la pioche vide" : ""}`
    : `${n === 2 ? "both" : `the ${SEAT_WORDS.en[n] ?? n}`} players passed one after another${r.stock ? ", the stock empty" : ""}`;
  const pips = r.sides.map((side) => `${side.label} ${side.points}`).join(", ");
  const total = r.sides.reduce((sum, side) => sum + side.points, 0);
  const others = total - r.scorerPips;
  const how =
    r.blocked === "others_minus_own"
      ? fr
        ? `le total des autres moins le sien (${others} − ${r.scorerPips})`
        : `the others' total minus its own (${others} − ${r.scorerPips})`
      : r.blocked === "all_tiles"
        ? fr ? "tous les points restants, les siens compris" : "every point left, its own included"
        : r.teams
          ? fr ? "le total de l'autre" : "the other team's total"
          : fr ? "le total des autres" : "the others' total";
  const head = fr
    ? `Manche ${s.roundNumber} : bloquée, ${everyone}${s.outcome === "tie" ? ", égalité" : ""}.`
    : `Round ${s.roundNumber}: blocked, ${everyone}${s.outcome === "tie" ? ", a tie" : ""}.`;
  const inHand = fr ? `Points en main : ${pips}.` : `Points in hand: ${pips}.`;
  if (s.outcome === "tie") {
    if (r.tie === "nobody" || r.scorer === null) {
      return [head, fr ? `${inHand} Les plus légers sont à égalité : personne ne marque.` : `${inHand} The lightest are level: nobody scores.`];
    }
    const why =
      r.tie === "hand_or_nearest"
        ? fr ? "qui a ouvert la manche (ou le plus proche après lui)" : "the opener's side (or the nearest after it)"
        : fr ? "qui a posé le dernier domino (ou le plus proche après lui)" : "the side of the last tile (or the nearest after it)";
    return [
      head,
      fr
        ? `${inHand} Les plus légers sont à égalité : la manche revient à ${scorer}, ${why}, qui marque ${how} : ${pts}.`
        : `${inHand} The lightest are level: the round goes to ${scorer}, ${why}, which scores ${how}: ${pts}.`,
    ];
  }
  const lightest = r.teams ? (fr ? "L'équipe la plus légère" : "The lighter team") : fr ? "La main la plus légère" : "The lightest hand";
  return [
    head,
    fr ? `${inHand} ${lightest}, ${scorer}, marque ${how} : ${pts}.` : `${inHand} ${lightest}, ${scorer}, scores ${how}: ${pts}.`,
  ];
}

/** One line per finished round in the scores panel: « Manche 2 · équipe B +17 », « Manche 3
 * · Ana +12 », « Manche 4 · personne ne marque ». `who` is a team or a name (null: nobody). */
export function roundScoreLine(roundNumber: number, who: "A" | "B" | string | null, pts: number, lang: Lang): string {
  const head = t("round", lang, { n: roundNumber });
  if (who === null) return `${head} · ${lang === "fr" ? "personne ne marque" : "nobody scores"}`;
  const label = who === "A" || who === "B" ? teamLabel(who, lang) : who;
  return `${head} · ${label} +${pts}`;
}

/** The end of a game without teams: « Ana gagne avec 62 points (Ben 40, Chloé 12). » */
export function winnerSeatText(
  name: string,
  score: number,
  others: readonly { name: string; score: number }[],
  youWon: boolean,
  lang: Lang,
): string {
  const rest = others.map((o) => `${o.name} ${o.score}`).join(", ");
  const head =
    lang === "fr"
      ? `${name} gagne avec ${points(score, lang)}${rest ? ` (${rest})` : ""}.`
      : `${name} wins with ${points(score, lang)}${rest ? ` (${rest})` : ""}.`;
  return head + cheer(youWon, lang);
}

function cheer(youWon: boolean, lang: Lang): string {
  return lang === "fr"
    ? youWon
      ? " Bravo, vous avez gagné !"
      : " Vous ferez mieux la prochaine fois."
    : youWon
      ? " Well done, you won!"
      : " Better luck next time.";
}

/** The end of the game (R17): « L'équipe A (Ana et Chloé) gagne 68 à 29. » */
export function winnerText(
  team: "A" | "B",
  members: readonly string[],
  scoreWinner: number,
  scoreLoser: number,
  youWon: boolean,
  lang: Lang,
): string {
  const who = `${capitalise(theTeam(team, lang))} (${joinWords(members, lang)})`;
  const head =
    lang === "fr"
      ? `${who} gagne ${scoreWinner} à ${scoreLoser}.`
      : `${who} wins ${scoreWinner} to ${scoreLoser}.`;
  return head + cheer(youWon, lang);
}

function capitalise(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

// -- refusals --------------------------------------------------------------------------------

const REASONS: Readonly<Record<string, Entry>> = {
  REQUEST_ID_MALFORMED: {
    fr: "La demande n'a pas pu être envoyée correctement. Rechargez la page.",
    en: "The request could not be sent properly. Reload the page.",
  },
  NAME_INVALID: {
    fr: "Un nom a de 1 à 24 caractères, dont au moins un visible.",
    en: "A name has 1 to 24 characters, at least one of them visible.",
  },
  TARGET_INVALID: {
    fr: "L'objectif va de 50 à 500 points, par pas de 50.",
    en: "The target is 50 to 500 points, in steps of 50.",
  },
  TILE_MALFORMED: {
    fr: "Ce domino n'existe pas.",
    en: "That tile does not exist.",
  },
  END_MALFORMED: {
    fr: "Choisissez le bout gauche ou le bout droit.",
    en: "Choose the left end or the right end.",
  },
  ID_MALFORMED: {
    fr: "Ce code d'invitation est mal tapé : il a 10 caractères.",
    en: "That invitation code is mistyped: it has 10 characters.",
  },
  TOKEN_MISSING: {
    fr: "Votre place n'a pas pu être vérifiée. Rechargez la page.",
    en: "Your seat could not be checked. Reload the page.",
  },
  TOKEN_INVALID: {
    fr: "Cette place n'est plus la vôtre (vous l'avez quittée, ou la table a été fermée).",
    en: "This seat is no longer yours (you left it, or the table was closed).",
  },
  NOT_HOST: {
    fr: "Seul l'hôte peut faire cela.",
    en: "Only the host can do that.",
  },
  NAME_TAKEN: {
    fr: "Ce nom ressemble trop à celui d'un joueur déjà assis : choisissez-en un autre.",
    en: "That name looks like the name of a player already seated: choose another one.",
  },
  TABLE_NOT_FOUND: {
    fr: "Cette table n'existe plus.",
    en: "This table no longer exists.",
  },
  CODE_NOT_FOUND: {
    fr: "Aucune table n'a ce code d'invitation. Vérifiez-le.",
    en: "No table has this invitation code. Check it.",
  },
  TABLE_FULL: {
    fr: "Cette table est complète : toutes ses places sont prises.",
    en: "This table is full: every seat is taken.",
  },
  GAME_ALREADY_STARTED: {
    fr: "La partie a déjà commencé.",
    en: "The game has already started.",
  },
  NOT_ENOUGH_PLAYERS: {
    fr: "Toutes les places doivent être prises pour lancer la partie.",
    en: "Every seat must be taken to start the game.",
  },
  ROUND_NOT_IN_PLAY: {
    fr: "Aucune manche n'est en cours : attendez la suivante.",
    en: "No round is being played: wait for the next one.",
  },
  NOT_YOUR_TURN: {
    fr: "Ce n'est pas votre tour.",
    en: "It is not your turn.",
  },
  TILE_NOT_IN_HAND: {
    fr: "Ce domino n'est plus dans votre main.",
    en: "That tile is no longer in your hand.",
  },
  TILE_DOES_NOT_FIT: {
    fr: "Ce domino ne va pas sur ce bout.",
    en: "That tile does not fit that end.",
  },
  MUST_PLAY: {
    fr: "Vous avez un domino qui va : on ne passe que si rien ne va.",
    en: "One of your tiles fits: you may pass only when nothing fits.",
  },
  GAME_OVER: {
    fr: "La partie est terminée.",
    en: "The game is over.",
  },
  RULES_INVALID: {
    fr: "Ces règles ne permettent pas ce choix (joueurs, dominos ou temps de jeu).",
    en: "These rules do not offer that choice (players, tiles or turn time).",
  },
  RULES_UNAVAILABLE: {
    fr: "Ce jeu n'est pas encore disponible : choisissez-en un autre.",
    en: "This game is not available yet: choose another one.",
  },
  MUST_DRAW: {
    fr: "Aucun domino ne va : piochez d'abord.",
    en: "No tile fits: draw first.",
  },
  CANNOT_DRAW: {
    fr: "La pioche est vide, ou ce jeu n'en a pas.",
    en: "The stock is empty, or this game has none.",
  },
  ROBOTS_UNAVAILABLE: {
    fr: "Ce jeu n'a pas de joueurs ordinateur.",
    en: "This game has no computer players.",
  },
  FRIENDLY_END_UNAVAILABLE: {
    fr: "Cette table ne permet pas de terminer la partie à l'amiable.",
    en: "This table has no friendly end.",
  },
  VOTE_OPEN: {
    fr: "Un vote pour terminer la partie est en cours : la partie attend.",
    en: "A vote to end the game is open: the game waits.",
  },
  NO_VOTE_OPEN: {
    fr: "Aucun vote n'attend votre réponse.",
    en: "No vote is waiting for your answer.",
  },
  ALREADY_PROPOSED: {
    fr: "Vous avez déjà proposé de terminer pendant cette manche.",
    en: "You already proposed to end during this round.",
  },
  ROBOT_SEAT: {
    fr: "Un robot a pris votre place : vous n'êtes pas revenu à temps.",
    en: "A robot took your seat: you did not come back in time.",
  },
  VERSION_CONFLICT: {
    fr: "La table a changé entre-temps : regardez à nouveau et rejouez.",
    en: "The table changed meanwhile: look again and play again.",
  },
  REQUEST_ID_REUSED: {
    fr: "Cette demande a déjà servi : réessayez.",
    en: "That request was already used: try again.",
  },
  STREAM_REPLACED: UI.replaced,
  RATE_LIMITED: {
    fr: "Trop de demandes : attendez un peu.",
    en: "Too many requests: wait a little.",
  },
  UNAVAILABLE: {
    fr: "Le service est momentanément indisponible : nouvel essai…",
    en: "The service is briefly unavailable: retrying…",
  },
  REQUEST_MALFORMED: {
    fr: "Le serveur n'a pas compris la demande : rechargez la page.",
    en: "The server could not read the request: reload the page.",
  },
  REQUEST_TOO_LARGE: {
    fr: "La demande est trop grande pour le serveur : rechargez la page.",
    en: "The request is too large for the server: reload the page.",
  },
};

const LIMITS: Readonly<Record<string, Entry>> = {
  creates_per_address: {
    fr: "Vous avez créé beaucoup de tables : attendez un peu avant d'en créer une autre.",
    en: "You created many tables: wait a little before creating another one.",
  },
  creates_per_second: {
    fr: "Le service est très demandé : réessayez dans un instant.",
    en: "The service is busy: try again in a moment.",
  },
  lobbies_per_address: {
    fr: "Vous avez trop de tables en attente : lancez-en ou quittez-en une d'abord.",
    en: "You have too many tables waiting: start or leave one first.",
  },
  join_failures_per_connection: {
    fr: "Trop de codes erronés : vérifiez le code et attendez un peu.",
    en: "Too many wrong codes: check the code and wait a little.",
  },
  join_failures_per_address: {
    fr: "Trop de codes erronés : vérifiez le code et attendez un peu.",
    en: "Too many wrong codes: check the code and wait a little.",
  },
  lobby_changes: {
    fr: "Cette table change trop vite : attendez un instant.",
    en: "This table is changing too fast: wait a moment.",
  },
};

const GENERIC: Readonly<Record<string, Entry>> = {
  network: {
    fr: "Le serveur ne répond pas. Vérifiez votre connexion et réessayez.",
    en: "The server does not answer. Check your connection and try again.",
  },
  unknown: {
    fr: "Une erreur inattendue s'est produite. Réessayez.",
    en: "An unexpected error happened. Try again.",
  },
};

/** The sentence for a refusal: by its reason (and `limit` for RATE_LIMITED), else by its
 * kind; a wait in seconds is added when the server asked for one. Never shows rule ids or
 * the server's message. */
export function reasonSentence(
  reason: string | null,
  lang: Lang,
  extra: { limit?: string | null; retrySeconds?: number | null; network?: boolean } = {},
): string {
  let sentence: string;
  if (reason === "RATE_LIMITED") {
    sentence = (LIMITS[extra.limit ?? ""] ?? REASONS.RATE_LIMITED!)[lang];
  } else if (reason !== null && reason in REASONS) {
    sentence = REASONS[reason]![lang];
  } else {
    sentence = (extra.network ? GENERIC.network! : GENERIC.unknown!)[lang];
  }
  const wait = extra.retrySeconds;
  if (wait !== null && wait !== undefined && wait > 0 && reason === "RATE_LIMITED") {
    const s = Math.ceil(wait);
    sentence += lang === "fr" ? ` (encore ${s} s)` : ` (${s} s to go)`;
  }
  return sentence;
}

/** Every reason with a sentence (tests check the contract's reasons are all covered). */
export const REASONS_WITH_SENTENCES: readonly string[] = Object.keys(REASONS);
