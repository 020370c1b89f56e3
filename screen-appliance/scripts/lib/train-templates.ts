/**
 * Templated training sentences for the bias and toxicity classifiers, written for training only
 * and disjoint from the evaluation's word lists (lib/harm-lexicon.ts): no target, predicate or
 * frame is shared, and no generated sentence equals an evaluation or contrast sentence
 * (train-templates.test.ts checks both).
 *
 * Why: the datasets teach topic words. CrowS-Pairs positives mention Black people, so "Black"
 * predicts RACE_ETHNICITY whatever is said; Jigsaw has two threats. Here every type gets harmful
 * statements (a stereotype, dehumanising hate, a threat, an appearance insult) and, as
 * counter-examples, benign statements about the same targets in the same frames, so only what is
 * said about the group separates the classes.
 *
 * Split: every fifth predicate (index % 5 == 3, harmful and benign lists alike) and every fifth
 * frame (index % 5 == 3) are held out of training and used only to fit the calibration, so the
 * calibration sees predicates and sentence frames the model never saw, as the evaluation does (a
 * map fit on known frames only trusts what the model says about novel wording too little).
 */
import type { BiasType, ToxicityType } from "../../src/detect/types.ts";
import { mulberry32 } from "./bag-mlp.ts";

export interface TrainLexicon {
  targets: readonly string[];
  harmful: readonly string[];
  benign: readonly string[];
  /** `{t}` the target, `{p}` the predicate (which may hold `{t}` itself). */
  frames: readonly string[];
}

/** Group phrases: each group word with each head noun ("Black" x "people" -> "Black people"). */
const phrases = (groups: string, heads: string) =>
  groups.split(",").flatMap((g) => heads.split(",").map((h) => `${g.trim()} ${h.trim()}`));

const RACE_GROUPS = phrases(
  "Black, white, Asian, Hispanic, Latino, Arab, African American, Native American, brown, Indigenous, Chinese, Middle Eastern",
  "people, men, women, folks, kids, guys, families",
);
const NATIONAL_GROUPS = [
  ...`Mexicans, Russians, Indians, Nigerians, Poles, Italians, Germans, Turks, Brazilians, Somalis,
  Ukrainians, Filipinos, Syrians, Haitians, Afghans, Greeks, Colombians, Egyptians, Albanians,
  Americans, Bulgarians, Romanians, Pakistanis, Iranians, Iraqis, Cubans, Jamaicans, Moroccans,
  Canadians, Australians, Koreans, Ethiopians, Kenyans, Serbs, Venezuelans, the Irish, the French,
  the Dutch, the British`
    .split(",")
    .map((t) => t.trim()),
  ...phrases("Chinese, Japanese, Vietnamese, Lebanese, Sudanese, Portuguese, Swiss", "people"),
  ...phrases("Mexico, Poland, India, Nigeria, Romania, Honduras, Morocco, Iraq, China", "people from").map(
    (t) => t.replace(/^(\S+) (people from)$/, "$2 $1"),
  ),
  ...phrases("Guatemala, Syria, Albania, Somalia, Haiti, Russia", "immigrants from").map((t) =>
    t.replace(/^(\S+) (immigrants from)$/, "$2 $1"),
  ),
];
const HATE_GROUPS = [
  ...`Muslims, Jews, Hindus, Sikhs, Christians, Catholics, atheists, gays, lesbians, gay men, gay people,
  bisexual people, trans people, transgender people, homosexuals, women, feminists, immigrants,
  refugees, migrants, foreigners, Roma, gypsies, disabled people, Black people, blacks, Africans, Asians,
  Arabs, Mexicans, Pakistanis, Somalis, Jewish people, Hispanics`
    .split(",")
    .map((t) => t.trim()),
];
const PEOPLE = `You, He, She, Him, Her, Them, That cop, My landlord, Your sister, The teacher, Your father,
That guy, The mayor, My ex, His wife, Your kids, The senator, My coworker, This clown, The driver,
That idiot, The coach, Your boss, The manager, My neighbor, The waiter, The nurse, My cousin`
  .split(",")
  .map((t) => t.trim());

const GROUP_FRAMES = [
  "{t} {p}!",
  "It's a fact that {t} {p}.",
  "Why won't anyone admit {t} {p}?",
  "lol {t} {p}",
  "Not gonna lie, {t} {p}.",
  "My dad always told me {t} {p}.",
  "The truth is {t} {p}.",
  "Around here {t} {p}.",
  "Funny how {t} {p}.",
  "I read that {t} {p}.",
  "Ugh, {t} {p}.",
  "I don't care what anyone says, {t} {p}.",
  "Typical. {t} {p}.",
  "Let's be real, {t} {p}.",
  "I've always thought {t} {p}.",
  "My neighbor says {t} {p}.",
  "Just saying, {t} {p}.",
  "smh {t} {p}",
];

export const TRAIN_LEXICON: Record<BiasType | ToxicityType, TrainLexicon> = {
  RACE_ETHNICITY: {
    targets: [...RACE_GROUPS, "blacks", "whites", "Asians", "Hispanics", "Latinas", "mixed-race kids"],
    harmful: [
      "are all thugs",
      "are genetically inferior",
      "are too dumb to run a business",
      "only know how to sell drugs",
      "are savages",
      "belong back in the jungle",
      "are nothing but welfare cheats",
      "have low IQs",
      "all look the same",
      "are greedy and sneaky",
      "make terrible employees",
      "commit most of the crime",
      "can't drive to save their lives",
      "are a dirty race",
      "are inferior to the rest of us",
      "shouldn't be allowed to vote",
      "smell like curry and garbage",
      "are always up to no good",
      "will rob you if you turn your back",
      "are ignorant and uneducated",
      "don't know how to raise their kids",
      "are loud, rude and ghetto",
      "are good only for cleaning houses",
      "are all gang members",
      "are useless freeloaders",
      "can't be trusted around money",
      "are too lazy to hold a job",
      "bring disease wherever they go",
      "are all on food stamps",
      "ought to stay with their own kind",
      "have no culture worth mentioning",
      "lower the value of every street they live on",
      "are naturally violent",
      "will never be as smart as us",
      "get hired only because of quotas",
      "are a drain on the taxpayer",
      "turn into animals when they drink",
    ],
    benign: [
      "are all students here",
      "have many different traditions",
      "run lots of small businesses downtown",
      "started the bakery on Main Street",
      "have a long and rich history",
      "work in every profession",
      "vote in every election",
      "come from many backgrounds",
      "coach the youth soccer team",
      "are teachers, doctors and engineers",
      "are part of our community",
      "have the same rights as everyone",
      "cooked for the whole block last weekend",
      "are a big part of the choir",
      "organized the summer fair",
      "joined the book club",
      "volunteer at the library",
      "were the first to help after the storm",
      "are winning awards in science",
      "host a great music festival",
      "have lived in this valley for generations",
      "opened a new clinic",
      "speak many languages",
      "built the community garden",
      "are my favorite neighbors",
      "can be trusted with the keys",
      "hold jobs all over the city",
      "bring food to every potluck",
      "are all in the science club",
      "are friends with everyone on the street",
      "have a culture worth celebrating",
      "keep the gardens on our street beautiful",
      "are naturally welcoming",
      "will ace the exam like anyone else",
      "get hired for their skills",
      "are taxpayers like the rest of us",
      "are great fun at a party",
    ],
    frames: GROUP_FRAMES,
  },
  NATIONALITY_LOCATION: {
    targets: NATIONAL_GROUPS,
    harmful: [
      "are all smugglers",
      "sneak across the border to live off welfare",
      "are a nation of liars",
      "only come here to sell drugs",
      "are too primitive for a modern country",
      "can't be trusted in business",
      "are dirty and backward",
      "are freeloaders who should go home",
      "are nothing but pickpockets",
      "should be kicked out of the country",
      "are scammers and crooks",
      "don't belong in this country",
      "are all illegals",
      "are ruining our towns",
      "are stupid peasants",
      "are loud, arrogant and dishonest",
      "are a plague on our cities",
      "are criminals who should be sent back",
      "never pay their taxes",
      "are uncivilized",
      "stink up the whole bus",
      "are all in the mafia",
      "can't speak a word of proper English",
      "are taking over our neighborhoods",
      "are lazy good-for-nothings",
      "are all drug mules",
      "steal our jobs and send the money home",
      "come from a country of thieves",
      "bring crime into every city",
      "can't do anything right",
      "cheat everyone at the market",
      "live ten to a room like animals",
      "are backward villagers",
      "should stay in their own filthy country",
      "only marry for the passport",
      "are corrupt to the bone",
      "ruin every place they settle",
      "can never be civilized",
      "are born liars",
    ],
    benign: [
      "are all at the conference",
      "cross the border to visit family",
      "are a nation of poets",
      "come here to study medicine",
      "have a modern and lively country",
      "are trusted partners in business",
      "have beautiful old cities",
      "are friends who should visit again",
      "are nothing but kind to us",
      "should be proud of their country",
      "are engineers and nurses",
      "have lived in this country for years",
      "are all registered for the course",
      "are opening restaurants in our towns",
      "are skilled farmers",
      "are warm, funny and generous",
      "are a delight to work with",
      "are guests who should feel at home",
      "pay their taxes like everyone",
      "are great hosts",
      "filled up the whole bus to the game",
      "are all in the choir",
      "speak several languages fluently",
      "are moving into our neighborhoods",
      "are hard workers",
      "are all language teachers",
      "take our bus tours and love the city",
      "come from a country of painters",
      "bring great food into every city",
      "can cook anything",
      "are friendly to everyone at the market",
      "live in a beautiful part of the world",
      "are proud villagers",
      "should visit their own lovely country more",
      "marry in huge colorful weddings",
      "are honest to the bone",
      "improve every place they settle",
      "are always civic-minded",
      "are born hosts",
    ],
    frames: GROUP_FRAMES,
  },
  APPEARANCE: {
    targets: [
      ...PEOPLE.filter((t) => !/^(You|Them|Him|Her)$/.test(t)),
      "My roommate",
      "The receptionist",
      "Her boyfriend",
      "That woman",
      "This man",
      "The singer",
      "The intern",
    ],
    harmful: [
      "is an obese cow",
      "has a face only a mother could love",
      "is a fat lump",
      "looks like a troll under a bridge",
      "has a nose like a beak",
      "is a greasy, pimply mess",
      "is too fat to fit through the door",
      "has a disgusting beer belly",
      "is a scrawny little stick",
      "has the ugliest haircut I've ever seen",
      "is a hideous beast",
      "looks like a beached whale",
      "has yellow rotten teeth",
      "is a walking skeleton",
      "needs to lose a hundred pounds",
      "has a face like a horse",
      "is an ugly dwarf",
      "is a fat slob who eats all day",
      "looks like a zombie",
      "is built like a fridge",
      "has repulsive skin",
      "is so ugly it hurts",
      "waddles like a pig",
      "has a double chin and no neck",
      "is a balding loser",
      "is a fat pig",
      "has a face like a smashed crab",
      "looks like something from a sewer",
      "has the body of a potato",
      "is a four-eyed geek with bad skin",
      "is an embarrassment with that gut",
      "has a horse face",
      "should wear a bag over that face",
      "has the worst acne in the state",
      "is so fat the floor shakes",
      "looks like a melted candle",
      "has teeth like a rabbit",
      "is a skinny ugly rat",
      "is shaped like a barrel",
    ],
    benign: [
      "is an excellent cook",
      "has a face full of freckles",
      "is a fast learner",
      "looks like a movie star tonight",
      "has a nose for good stories",
      "is a calm, patient listener",
      "is too tall to fit in my car",
      "has a wonderful laugh",
      "is a talented little dancer",
      "has the nicest haircut I've ever seen",
      "is a hard worker",
      "looks like a proud parent",
      "has bright white teeth",
      "is a walking encyclopedia",
      "needs to lose the old phone charger",
      "has a face like a painting",
      "is a great storyteller",
      "is a fine chef who cooks all day",
      "looks well rested",
      "is built like an athlete",
      "has glowing skin",
      "is so funny it hurts",
      "walks the dog every morning",
      "has a warm smile and kind eyes",
      "is a brilliant lawyer",
      "is a good pig farmer",
      "has a face like a kind grandmother",
      "looks like someone from a magazine",
      "has the stamina of a marathon runner",
      "is a clever geek with great ideas",
      "is a hero with that guitar",
      "has a friendly face",
      "should wear a hat in that sun",
      "has the best grades in the state",
      "is so strong the whole team relies on that",
      "looks like a happy kid",
      "has teeth like pearls",
      "is a skinny fast runner",
      "is shaped like a pro swimmer",
    ],
    frames: [
      "{t} {p}!",
      "Not gonna lie, {t} {p}.",
      "lol {t} {p}",
      "Have you noticed {t} {p}?",
      "I'm sorry but {t} {p}.",
      "OMG {t} {p}.",
      "Seriously, {t} {p}.",
      "To be fair, {t} {p}.",
      "Pretty sure {t} {p}.",
      "At the party {t} {p}.",
      "Ugh, {t} {p}.",
      "Everyone says {t} {p}.",
      "Not to be mean but {t} {p}.",
      "smh {t} {p}",
    ],
  },
  HATE: {
    targets: HATE_GROUPS,
    harmful: [
      "are cockroaches",
      "should be exterminated",
      "should be gassed",
      "are a plague on humanity",
      "need to be purged from society",
      "are inbred degenerates",
      "should all hang",
      "are not real humans",
      "should be sent to camps",
      "are a cancer on this nation",
      "deserve to be beaten in the street",
      "are godless savages",
      "are rats",
      "are diseased freaks",
      "should burn",
      "are an inferior breed",
      "are nothing but apes",
      "have no place among decent people",
      "must be eradicated",
      "are a stain on our race",
      "are evil and should die",
      "are mongrels",
      "are a virus",
      "pollute our blood",
      "should be shot on sight",
      "should be wiped out",
      "deserve a bullet",
      "have no right to live",
      "should be thrown into the ocean",
      "are parasites feeding on us",
      "should be rounded up and shot",
      "are worse than vermin",
      "are a disease that needs a cure",
      "need to be hunted down",
      "are genetically evil",
      "are devils in human form",
      "should all be locked up forever",
      "pollute everything they touch",
    ],
    benign: [
      "are our fellow citizens",
      "should be celebrated",
      "should be heard",
      "are a gift to humanity",
      "need to be included in society",
      "are generous hosts",
      "should all vote",
      "are real heroes",
      "should be given scholarships",
      "are a strength of this nation",
      "deserve to walk safely in the street",
      "are kind neighbors",
      "are artists",
      "are brave volunteers",
      "should speak up",
      "are an important community",
      "are nothing but friendly",
      "have a place among us all",
      "must be protected",
      "are a credit to our city",
      "are good and should thrive",
      "are musicians",
      "are a blessing",
      "enrich our culture",
      "should be welcomed on sight",
      "should be thanked",
      "deserve a raise",
      "have every right to live here",
      "should be invited on the boat trip",
      "are partners helping us",
      "should be welcomed and celebrated",
      "are better than any of us at chess",
      "are a team that needs more funding",
      "need to be listened to",
      "are genuinely kind",
      "are saints in human form",
      "should all be given a vote",
      "improve everything they touch",
    ],
    frames: [
      "{t} {p}!",
      "{t}, all of them, {p}.",
      "I'm telling you, {t} {p}.",
      "The way I see it {t} {p}.",
      "Face the facts: {t} {p}.",
      "lol {t} {p}",
      "Can we agree {t} {p}?",
      "Again, {t} {p}.",
      "I believe {t} {p}.",
      "Frankly {t} {p}.",
      "Ugh, {t} {p}.",
      "Mark my words: {t} {p}.",
      "Say it with me, {t} {p}.",
      "I've said it before, {t} {p}.",
      "smh {t} {p}",
    ],
  },
  PHYSICAL_SAFETY: {
    targets: PEOPLE.filter((t) => !/^(He|She)$/.test(t)).map((t) =>
      /^(My|The|That|This|Your|His|You|Him|Her|Them)\b/.test(t)
        ? t.replace(/^\S+/, (w) => w.toLowerCase())
        : t,
    ),
    harmful: [
      "I'm going to murder {t}",
      "I'll slit the throat of {t}",
      "I'll break the legs of {t}",
      "I'm gonna put {t} in the hospital",
      "I'll run {t} over with my car",
      "I'll snap the neck of {t}",
      "I'm going to choke {t} until {t} stops breathing",
      "I'll set fire to the house with {t} inside",
      "I'm gonna gut {t} like a fish",
      "I'll smash the skull of {t} in",
      "{t} will be dead by Friday",
      "I know where {t} lives and I'm bringing my gun",
      "I'll make {t} bleed",
      "I'm going to torture {t}",
      "I'll drown {t} in the lake",
      "I'm going to put a knife in {t}",
      "I'll beat {t} with a bat until {t} can't stand",
      "I'm going to poison {t}",
      "I'll cut {t} into pieces",
      "I'm going to end {t} for good",
      "I'll put {t} six feet under",
      "I will execute {t}",
      "I'm going to attack {t} in the parking lot",
      "I'll punch {t} until {t} is unconscious",
      "I'm going to bury {t} alive",
      "I'm gonna kill {t} with my bare hands",
      "I'll shoot {t} if I see {t} again",
      "I'll stab {t} in the neck",
      "someone needs to hurt {t}",
      "I'll beat {t} up after school",
      "we should lynch {t}",
      "I'll kill {t} and the whole family",
      "I'm going to shoot up the office where {t} works",
      "I will find {t} and make {t} suffer",
      "I'll blow the brains out of {t}",
      "I'm going to hurt {t} so badly",
      "{t} is going to get stabbed tonight",
      "{t} better watch out because I'm coming with a knife",
      "I'll make sure {t} never walks again",
      "I'm going to bash in the face of {t}",
      "somebody should put a bullet in {t}",
      "I hope {t} gets shot",
      "I'll kill {t} if it's the last thing I do",
      "{t} won't survive the night",
      "I'm going to hunt {t} down",
      "I'll strangle {t} with my own hands",
      "I'll burn {t} alive",
      "I'll beat {t} to death",
      "I'm going to kick {t} until {t} stops moving",
      "I'll fracture the skull of {t}",
    ],
    benign: [
      "I'm going to visit {t}",
      "I'll send a thank-you note to {t}",
      "I'll ask {t} about the legs of the table",
      "I'm gonna take {t} to the cinema",
      "I'll drive {t} to the airport",
      "I'll pick up the scarf of {t}",
      "I'm going to phone {t} until {t} picks up",
      "I'll set the table with {t} inside",
      "I'm gonna cook fish with {t}",
      "I'll fix the bike of {t}",
      "{t} will be back by Friday",
      "I know where {t} lives and I'm bringing my guitar",
      "I'll make {t} breakfast",
      "I'm going to congratulate {t}",
      "I'll swim with {t} in the lake",
      "I'm going to put a word in for {t}",
      "I'll play baseball with {t} until {t} gets tired",
      "I'm going to pay {t}",
      "I'll cut the cake for {t}",
      "I'm going to text {t} for good luck",
      "I'll pick up a gift for {t}",
      "I will interview {t}",
      "I'm going to meet {t} in the parking lot",
      "I'll tell {t} jokes until {t} is laughing",
      "I'm going to surprise {t} with flowers",
      "I'm gonna kill some time with {t}",
      "I'll shoot a video with {t}",
      "I'll take a photo of {t}",
      "someone needs to thank {t}",
      "I'll pick {t} up after school",
      "we should celebrate {t}",
      "I'll visit {t} and the whole family",
      "I'm going to stop by the office where {t} works",
      "I will find {t} and say hello",
      "I'll pick the brain of {t} about it",
      "I'm going to help {t} so much",
      "{t} is going to get promoted tonight",
      "{t} better watch out because I'm coming with a cake",
      "I'll make sure {t} never walks home alone",
      "I'm going to paint the face of {t} for the carnival",
      "somebody should give a medal to {t}",
      "I hope {t} gets the job",
      "I'll thank {t} if it's the last thing I do",
      "{t} won't believe the surprise tonight",
      "I'm going to track {t} down for lunch",
      "I'll knit a scarf for {t} with my own hands",
      "I'll bake a pie for {t}",
      "I'll cheer {t} to victory",
      "I'm going to dance with {t} until {t} stops laughing",
      "I'll fix the roof of {t}",
    ],
    frames: [
      "{p}!",
      "{p}, trust me.",
      "Swear to god {p}.",
      "You heard me, {p}.",
      "Next week {p}.",
      "lol {p}",
      "Tonight {p}.",
      "Honestly? {p}.",
      "No joke, {p}.",
      "When I get home {p}.",
      "I mean it, {p}.",
      "Ok so {p}.",
      "I promise {p}.",
      "Just wait, {p}.",
      "smh {p}",
    ],
  },
};

/**
 * Vocabulary slots: a predicate pattern ("are such {a} {n}") filled from word lists, so the model
 * sees each harmful word (and each benign one) in many predicates, not one. The patterns are
 * phrased unlike any evaluation predicate ("such", "nothing but", "every one of them"...).
 */
const W = (words: string) => words.split(/\s*,\s*/).filter(Boolean);

const STEREOTYPE_ADJ = W(`lazy, stupid, dumb, dirty, filthy, smelly, violent, dangerous, greedy, dishonest,
  corrupt, primitive, backward, ignorant, inferior, evil, worthless, useless, disgusting, sneaky, savage,
  untrustworthy, brutal, vile, cheap, rude, loud, arrogant, dumb as rocks, uneducated, criminal, shifty,
  aggressive, hostile, sleazy, crooked, treacherous, barbaric, uncivilized, unhygienic`);
const STEREOTYPE_NOUN = W(`animals, apes, monkeys, pigs, dogs, rats, cockroaches, parasites, leeches, vermin,
  scum, trash, garbage, savages, barbarians, thugs, criminals, thieves, crooks, liars, cheats, terrorists,
  rapists, drunks, junkies, freeloaders, bums, losers, idiots, morons, degenerates, crooks and frauds,
  lowlifes, hoodlums, gangsters, moochers, scroungers, invaders, bandits, mobsters`);
const KIND_ADJ = W(`kind, smart, friendly, honest, generous, welcoming, busy, creative, talented, funny,
  brave, polite, hardworking, helpful, curious, proud, cheerful, warm, thoughtful, quiet, clever, modest,
  patient, gentle, skilled, reliable, sociable, lively, easygoing, careful, punctual, musical, sporty,
  cultured, educated, devoted, tidy, open-minded, fair, respectful`);
const KIND_NOUN = W(`neighbors, friends, colleagues, students, teachers, doctors, nurses, artists, musicians,
  athletes, parents, volunteers, citizens, engineers, farmers, chefs, hosts, voters, workers, heroes,
  scientists, writers, dancers, bakers, builders, drivers, coaches, mentors, singers, poets, painters,
  gardeners, cooks, readers, fans, customers, tenants, classmates, teammates, people`);

const DEHUMANIZE_NOUN = W(`animals, apes, rats, cockroaches, parasites, leeches, vermin, scum, trash, filth,
  subhumans, savages, maggots, lice, a disease, a plague, a cancer, an infestation, a virus, mongrels,
  beasts, swine, dogs, insects, pests, degenerates, abominations, freaks, monsters, demons`);
const ELIMINATE = W(`killed, exterminated, deported, gassed, hanged, banned, purged, expelled, shot,
  wiped off the map, thrown out, locked in cages, sterilized, lynched, burned, rounded up, eliminated,
  removed from society, beaten, stoned, driven into the sea, put down, erased, crushed, slaughtered`);
const INCLUDE = W(`thanked, welcomed, hired, invited, supported, heard, included, praised, celebrated,
  respected, protected, encouraged, promoted, elected, honored, helped, trusted, paid fairly, consulted,
  listened to, treated equally, given a chance, funded, admired, applauded`);

const UGLY_ADJ = W(`fat, ugly, hideous, gross, disgusting, obese, scrawny, bald, greasy, smelly, pimply,
  wrinkled, deformed, lumpy, saggy, repulsive, grotesque, homely, frumpy, flabby, bony, hairy, pasty,
  chubby, bloated, sweaty, toothless, cross-eyed, pudgy, misshapen`);
const UGLY_NOUN = W(`pig, cow, whale, hippo, troll, freak, slob, monster, goblin, ogre, beast, blob, gremlin,
  toad, skeleton, scarecrow, walrus, potato, fatso, lardass, hag, gargoyle, swamp creature, dog`);
const NICE_ADJ = W(`pretty, handsome, fit, tall, cheerful, stylish, elegant, lovely, beautiful, radiant,
  neat, sharp, graceful, charming, athletic, healthy, glowing, striking, cute, well dressed, smiley,
  bright-eyed, tanned, strong, slim`);
const NICE_NOUN = W(`star, model, sweetheart, athlete, gentleman, lady, angel, dancer, champion, artist,
  runner, swimmer, singer, host, chef, friend, role model, sunshine, pro, natural, climber, cyclist`);

const HURT_VERB = W(`kill, murder, shoot, stab, strangle, choke, beat, punch, kick, hurt, burn, drown,
  poison, slaughter, butcher, behead, hang, torture, maim, wound, cripple, slash, knife, attack, assault,
  smash, bash, execute, gun down, blow up, run over, skin, mutilate, break, bury`);
const HURT_PARTICIPLE = W(`hurt, stabbed, shot, beaten, killed, strangled, burned, knifed, jumped, choked,
  punched, kicked, poisoned, drowned, smashed, crippled, maimed, bashed, murdered, slashed, gunned down`);
const KIND_PARTICIPLE =
  W(`paid, hired, hugged, thanked, invited, promoted, fed, praised, called, visited, helped,
  welcomed, greeted, tutored, interviewed, coached, served, cheered, driven home, picked up, congratulated`);
const KIND_VERB = W(`call, email, text, visit, hug, thank, help, meet, invite, greet, feed, pay, teach, hire,
  praise, join, phone, cheer on, remind, ask, kiss, drive, serve, cook for, write to, welcome, tutor,
  interview, forgive, compliment, coach, support, sit with, wave at, bake for`);

/** `count` predicates drawn (seeded) from `patterns`, each slot from its list; no duplicates. */
function slotted(
  patterns: readonly string[],
  slots: Record<string, readonly string[]>,
  count: number,
  seed: number,
): string[] {
  const random = mulberry32(seed);
  const pick = (list: readonly string[]) => list[Math.floor(random() * list.length)] as string;
  const out = new Set<string>();
  for (let tries = 0; out.size < count && tries < count * 20; tries++) {
    const pattern = pick(patterns);
    out.add(pattern.replace(/\{(\w+)\}/g, (_, slot: string) => pick(slots[slot] ?? [slot])));
  }
  return [...out];
}

const GROUP_HARM = [
  "are such {a} {n}",
  "are just {a}",
  "are nothing but {n}",
  "are a pack of {n}",
  "are the most {a} {n} around",
];
const GROUP_KIND = [...GROUP_HARM, "are not {h} at all"];
/** Stereotype shapes that say what a group does, causes or cannot be trusted with. */
const GROUP_DEEDS = [
  "are known for being {a}",
  "are always {ving}",
  "are behind all the {cause} around here",
  "can't be trusted with {thing}",
  "are {a} by nature",
];
const BAD_DEEDS =
  W(`stealing, lying, cheating, begging, fighting, causing trouble, dealing drugs, breaking the law,
  scamming people, making a mess, whining, getting drunk, robbing stores, starting riots, dodging taxes`);
const GOOD_DEEDS =
  W(`helping out, volunteering, smiling, cooking for neighbors, studying, working late, organizing
  events, sharing, laughing, teaching kids, fixing things, starting businesses, planting trees, playing music`);
const BAD_CAUSES = W(
  `crime, drugs, violence, disease, filth, noise, theft, fraud, vandalism, gang trouble, litter`,
);
const GOOD_CAUSES = W(
  `festivals, gardens, murals, concerts, charity drives, new shops, music, block parties, clinics`,
);
const THINGS = W(
  `money, kids, a job, anything, a car, your wallet, a key, the register, your house, responsibility`,
);

function generated(type: BiasType | ToxicityType, harmful: boolean): string[] {
  const count = 150;
  switch (type) {
    case "RACE_ETHNICITY":
    case "NATIONALITY_LOCATION": {
      const seed = type === "RACE_ETHNICITY" ? 101 : 202;
      return harmful
        ? slotted(
            [...GROUP_HARM, ...GROUP_DEEDS],
            { a: STEREOTYPE_ADJ, n: STEREOTYPE_NOUN, ving: BAD_DEEDS, cause: BAD_CAUSES, thing: THINGS },
            count,
            seed,
          )
        : slotted(
            [...GROUP_KIND, ...GROUP_DEEDS.map((p) => p.replace("can't be trusted", "can be trusted"))],
            {
              a: KIND_ADJ,
              n: KIND_NOUN,
              h: STEREOTYPE_ADJ,
              ving: GOOD_DEEDS,
              cause: GOOD_CAUSES,
              thing: THINGS,
            },
            count,
            seed + 1,
          );
    }
    case "HATE":
      return harmful
        ? slotted(
            [
              "are nothing but {n}",
              "ought to be {e}",
              "deserve to be {e}",
              "are {n} and ought to be {e}",
              "should be {e} like the {n} they are",
              "are {n} who need to be {e}",
            ],
            { n: DEHUMANIZE_NOUN, e: ELIMINATE },
            count,
            303,
          )
        : slotted(
            [
              "are nothing but {n}",
              "ought to be {i}",
              "deserve to be {i}",
              "are {n} and ought to be {i}",
              "should be {i} like the {n} they are",
              "are {n} who need to be {i}",
            ],
            { n: KIND_NOUN, i: INCLUDE },
            count,
            304,
          );
    case "APPEARANCE":
      return harmful
        ? slotted(
            ["is such a {a} {n}", "is just plain {a}", "is a {a}, {a} {n}", "looks like such a {n}"],
            { a: UGLY_ADJ, n: UGLY_NOUN },
            count,
            405,
          )
        : slotted(
            ["is such a {a} {n}", "is just plain {a}", "is a {a}, {a} {n}", "looks like such a {n}"],
            { a: NICE_ADJ, n: NICE_NOUN },
            count,
            406,
          );
    case "PHYSICAL_SAFETY":
      return slotted(
        [
          "I'm about to {v} {t}",
          "I'll {v} {t} tomorrow",
          "I want to {v} {t} so bad",
          "I'm coming over to {v} {t}",
          "{t} is going to get {pp}",
          "somebody should {v} {t}",
          "watch me {v} {t}",
          "{t} will get {pp} tonight",
        ],
        { v: harmful ? HURT_VERB : KIND_VERB, pp: harmful ? HURT_PARTICIPLE : KIND_PARTICIPLE, t: ["{t}"] },
        count,
        harmful ? 507 : 508,
      );
  }
}

/** A frame filled with a target and a predicate; the first letter is capitalised. */
export function fillTraining(frame: string, target: string, predicate: string): string {
  const text = frame.replace("{p}", predicate.replaceAll("{t}", target)).replace("{t}", target);
  const lowered = text.startsWith(target) ? text : text.replace(target, lowerDeterminer(target));
  return lowered.charAt(0).toUpperCase() + lowered.slice(1);
}

function lowerDeterminer(target: string): string {
  return target.replace(/^(My|The|Her|His|That|This|Our|Your)\b/, (w) => w.toLowerCase());
}

export type TemplateSplit = "train" | "calibration";

/** Every fifth predicate, and every fifth frame, is held out of training for the calibration fit. */
export const predicateSplit = (index: number): TemplateSplit => (index % 5 === 3 ? "calibration" : "train");

export interface TemplatedText {
  text: string;
  type: BiasType | ToxicityType;
  harmful: boolean;
  split: TemplateSplit;
  /** Both the predicate and the frame are held out (the calibration rows most unlike training). */
  novel: boolean;
}

/** The type's written predicates followed by the slot-generated ones. */
export function trainingPredicates(type: BiasType | ToxicityType): { harmful: string[]; benign: string[] } {
  return {
    harmful: [...new Set([...TRAIN_LEXICON[type].harmful, ...generated(type, true)])],
    benign: [...new Set([...TRAIN_LEXICON[type].benign, ...generated(type, false)])],
  };
}

/** Each predicate in each frame with `perFrame` targets drawn at random (seeded). */
export function trainingTemplates(type: BiasType | ToxicityType, perFrame = 1, seed = 11): TemplatedText[] {
  const { targets, frames } = TRAIN_LEXICON[type];
  const { harmful, benign } = trainingPredicates(type);
  const random = mulberry32(seed);
  const out: TemplatedText[] = [];
  for (const [isHarmful, predicates] of [
    [true, harmful],
    [false, benign],
  ] as const)
    predicates.forEach((predicate, index) => {
      frames.forEach((frame, frameIndex) => {
        for (let k = 0; k < perFrame; k++) {
          const target = targets[Math.floor(random() * targets.length)] as string;
          out.push({
            text: fillTraining(frame, target, predicate),
            type,
            harmful: isHarmful,
            split: predicateSplit(index) === "train" ? predicateSplit(frameIndex) : "calibration",
            novel: predicateSplit(index) === "calibration" && predicateSplit(frameIndex) === "calibration",
          });
        }
      });
    });
  return out;
}
