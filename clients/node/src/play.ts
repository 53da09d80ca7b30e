// Four scripted players play one complete game against a gateway:
//
//   DOMINOS_GATEWAY=127.0.0.1:50051 npx tsx src/play.ts   (or: npm run play)
//
// Prints every round as it ends, then the final scores and the elapsed time. Exit status 0
// when the game finished, 1 otherwise. A development tool, never a player (S2): the scripted
// seats play only at the table they create and fill themselves.

import { describe } from "./client.js";
import { playGame, roundLine, scoreLine } from "./game.js";

const address = process.env["DOMINOS_GATEWAY"] || "127.0.0.1:50051";
const target = Number(process.env["DOMINOS_TARGET"] || 50);

async function main(): Promise<number> {
  console.log(`Dominos: four scripted players, target ${target}, gateway ${address}`);
  let lastRound = 0;
  const result = await playGame({
    address,
    target,
    log: (line) => console.log(`  ${line}`),
    onView: (seat, view) => {
      // Seat 0's stream is enough to report the rounds.
      if (seat !== 0 || view.last_round === null || view.last_round.round_number === lastRound)
        return;
      lastRound = view.last_round.round_number;
      console.log(`  ${roundLine(view)} -> A ${view.score_team_a}, B ${view.score_team_b}`);
    },
  });
  const final = result.finals[0]!;
  console.log(`game finished: ${scoreLine(final)}`);
  console.log(
    `  ${result.rounds} rounds, version ${final.version}, server ${result.serverVersion}, ` +
      `elapsed ${(result.elapsedMs / 1000).toFixed(2)} s`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`failed: ${describe(err)}`);
    process.exit(1);
  },
);
