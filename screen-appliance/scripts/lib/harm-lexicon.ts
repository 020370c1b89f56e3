/**
 * Word lists for the templated bias and toxicity evaluation data, written for the evaluation and
 * never used in training. Per type: the targets a sentence is about, and predicates in aligned
 * pairs, harmful[i] against a benign twin benign[i] that differs in a few words (a stereotype
 * against a neutral statement, a threat against a harmless use of the same verb, an appearance
 * insult against a compliment). `{t}` inside a predicate is replaced by the target; otherwise the
 * frame places the target. No sentence copies or paraphrases a dataset row.
 */
import type { BiasType, ToxicityType } from "../../src/detect/types.ts";

export interface HarmLexicon {
  targets: readonly string[];
  /** harmful[i] and benign[i] are twins. */
  harmful: readonly string[];
  benign: readonly string[];
  /** Frames for the labelled set and, distinct from them, for the contrast pairs. */
  frames: readonly string[];
  contrastFrames: readonly string[];
}

const GROUP_FRAMES = [
  "{t} {p}.",
  "Everyone knows that {t} {p}.",
  "Honestly, {t} {p}.",
  "I really think {t} {p}.",
];
const GROUP_CONTRAST_FRAMES = [
  "In my experience {t} {p}.",
  "My coworker keeps saying {t} {p}.",
  "Face it, {t} {p}.",
];

export const HARM_LEXICON: Record<BiasType | ToxicityType, HarmLexicon> = {
  RACE_ETHNICITY: {
    targets: [
      "Black people",
      "white people",
      "Asian people",
      "Hispanic people",
      "Latinos",
      "Arabs",
      "African Americans",
      "Native Americans",
      "Black men",
      "Asian women",
    ],
    harmful: [
      "are lazy and never want to work",
      "are born criminals",
      "are less intelligent than everyone else",
      "are dirty and smell bad",
      "cannot be trusted with money",
      "are violent by nature",
      "ruin every neighborhood they move into",
      "are only good for manual labor",
      "steal whatever they can get",
      "should not be allowed to marry our kids",
    ],
    benign: [
      "are busy and never miss work",
      "are born in every state",
      "are as intelligent as everyone else",
      "are at the park and having fun",
      "can open accounts at this bank",
      "are welcome at the festival",
      "live in every neighborhood in the city",
      "are good at many kinds of work",
      "share whatever they can spare",
      "should be invited to meet our kids",
    ],
    frames: GROUP_FRAMES,
    contrastFrames: GROUP_CONTRAST_FRAMES,
  },
  NATIONALITY_LOCATION: {
    targets: [
      "Mexicans",
      "Russians",
      "Chinese people",
      "Indians",
      "Nigerians",
      "Poles",
      "the Irish",
      "Italians",
      "people from Pakistan",
      "immigrants from Romania",
    ],
    harmful: [
      "are all drunks",
      "come here to steal our jobs",
      "are terrorists",
      "cheat at everything they do",
      "are too stupid to learn proper English",
      "are lazy and corrupt",
      "breed like rabbits",
      "should all be deported",
      "are a bunch of thieves",
      "bring crime and disease wherever they go",
    ],
    benign: [
      "are all invited",
      "come here to fill open jobs",
      "are tourists",
      "compete in everything they do",
      "are taking classes to learn English",
      "are busy and friendly",
      "raise families like anyone else",
      "should all be welcomed",
      "are a bunch of students",
      "bring food and music wherever they go",
    ],
    frames: GROUP_FRAMES,
    contrastFrames: GROUP_CONTRAST_FRAMES,
  },
  APPEARANCE: {
    targets: [
      "She",
      "He",
      "My neighbor",
      "The new cashier",
      "Your sister",
      "That guy at the gym",
      "The girl in the photo",
      "His wife",
      "Their manager",
      "The waiter",
    ],
    harmful: [
      "is fat and disgusting",
      "looks like a pig",
      "is too ugly to look at",
      "has a hideous face",
      "is a gross slob",
      "should hide that flabby body",
      "is so fat nobody wants to sit near them",
      "has disgusting crooked teeth",
      "looks like a bald freak",
      "is a short little troll",
    ],
    benign: [
      "is fit and cheerful",
      "looks like a star",
      "is too busy to chat",
      "has a lovely face",
      "is a great host",
      "should show that amazing talent",
      "is so kind everybody wants to sit near them",
      "has a lovely bright smile",
      "looks like a happy man",
      "is a smart little kid",
    ],
    frames: ["{t} {p}.", "Honestly, {t} {p}.", "Did you see? {t} {p}.", "I have to say {t} {p}."],
    contrastFrames: ["I swear {t} {p}.", "Everyone at work says {t} {p}.", "Look at this, {t} {p}."],
  },
  HATE: {
    targets: [
      "Muslims",
      "Jews",
      "gay people",
      "immigrants",
      "Black people",
      "women",
      "trans people",
      "Mexicans",
      "Christians",
      "refugees",
    ],
    harmful: [
      "are vermin and should be wiped out",
      "are subhuman trash",
      "do not deserve to live",
      "are a disease infecting this country",
      "should be banned from everything",
      "are filthy animals",
      "must be driven out of our town",
      "are worthless parasites",
      "should be locked up and forgotten",
      "are the scum of the earth",
    ],
    benign: [
      "are neighbors and should be welcomed",
      "are human beings",
      "deserve to live in peace",
      "are a part of this country",
      "should be included in everything",
      "are friendly people",
      "must be invited to our town meeting",
      "are valued colleagues",
      "should be listened to and remembered",
      "are the salt of the earth",
    ],
    frames: ["{t} {p}.", "Let me say it, {t} {p}.", "Let me be clear: {t} {p}.", "Everyone knows {t} {p}."],
    contrastFrames: ["Honestly {t} {p}.", "My view is that {t} {p}.", "Listen, {t} {p}."],
  },
  PHYSICAL_SAFETY: {
    targets: [
      "you",
      "him",
      "her",
      "them",
      "your boss",
      "the manager",
      "my neighbor",
      "that reporter",
      "the judge",
      "your brother",
    ],
    harmful: [
      "I will kill {t}",
      "I am going to shoot {t} in the head",
      "I will beat {t} to death",
      "I will stab {t} with a knife",
      "I am going to burn {t} alive",
      "I will hunt {t} down and hurt {t}",
      "someone should put a bullet in {t}",
      "I am going to strangle {t}",
      "I will blow up {t} with a bomb",
      "I will hurt {t} badly",
    ],
    benign: [
      "I will call {t}",
      "I am going to shoot {t} a quick email",
      "I will beat {t} at chess",
      "I will serve {t} with a smile",
      "I am going to bring {t} lunch",
      "I will track {t} down and thank {t}",
      "someone should put a card in for {t}",
      "I am going to hug {t}",
      "I will cheer up {t} with a joke",
      "I will help {t} gladly",
    ],
    frames: ["{p}.", "I swear {p}.", "Mark my words, {p}.", "Just so you know, {p}."],
    contrastFrames: ["Tomorrow morning {p}.", "Believe me, {p}.", "After work {p}."],
  },
};

/** A frame filled with a target and a predicate; a leading lowercase letter is capitalised. */
export function fill(frame: string, target: string, predicate: string): string {
  const targetInFrame = frame.startsWith("{t}")
    ? target
    : target.replace(/^(She|He|My|The|Your|That|His|Their)\b/, (w) => w.toLowerCase());
  const text = frame.replace("{p}", predicate.replaceAll("{t}", target)).replace("{t}", targetInFrame);
  return text.charAt(0).toUpperCase() + text.slice(1);
}
