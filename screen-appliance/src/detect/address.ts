/**
 * Street addresses in the common national forms: a street "core" is found, then widened to the
 * right over the address tail and to the left over a unit written before the street.
 *
 * - Cores: number first with a street type ("221B Baker Street", "99 rue de Rivoli",
 *   "12 Hauptstraße"); street first with a type before or after the name or a compound street word
 *   ("Via Roma 1", "ul. Marszałkowska 10/12", "Karl Johans gate 1", "Keizersgracht 123"); "corner of
 *   A and B"; PO boxes (they route mail to one person as a street address does, with the same
 *   tail); US military mail only with its APO/FPO/DPO line.
 * - Cued cores (a street without a type word, "Kesk 53", "113 S Main", or text in lower case) need
 *   an address lead-in right before them ("lives at", "address:", "ship to") or a unit or code after.
 * - Tail: up to 8 parts after a comma, one line break or spaces: unit, postcode + city, city +
 *   state + code, city + code, code, country. A city without a code is kept only when a code or
 *   the end of the sentence follows it; a blank line ends the address.
 * - Overlapping cores are one address. Likelihood: typed cores LIKELY, VERY_LIKELY with a tail or
 *   an address word nearby; weak types ("Hill", "Park") UNLIKELY alone; cued cores POSSIBLE.
 * - Bounds: every repetition is bounded and words and separators are disjoint classes, so each
 *   pattern does constant work per start; a rejected core is retried one character later, so the
 *   scan is linear in the text (`counter.runs` counts pattern executions).
 */
import { contextWords, hasContext } from "./context.ts";
import { type Finding, type Likelihood, likelihoodRank } from "./types.ts";

const list = (text: string) => text.trim().split(/\s+/);
// Street types written after the name in English.
const EN_TYPES = list(`Street Avenue Road Boulevard Lane Drive Court Place Terrace Parkway Circle Square
  Highway Crescent Close Alley Way Plaza Expressway Freeway Turnpike Esplanade Promenade Quay Wharf
  Embankment Causeway Parade`);
const EN_ABBREVIATIONS = list(`St Ave Av Rd Blvd Ln Dr Ct Pl Tce Terr Pkwy Cir Sq Hwy Cres Cl Expy Fwy Tpke
  Pde Esp`);
// The rest of the USPS street suffixes (Publication 28), as often the end of a place or product name.
const EN_WEAK_TYPES = list(`Alleys Annex Arcade Bayou Beach Bend Bluff Bluffs Bottom Branch Bridge Brook
  Brooks Burg Camp Canyon Cape Center Centers Circles Cliff Cliffs Club Common Commons Corner Corners
  Course Courts Cove Coves Creek Crest Crossing Crossroad Curve Dale Dam Divide Drives Estate Estates
  Extension Extensions Falls Ferry Field Fields Flat Flats Ford Fords Forest Forge Fork Forks Fort
  Gardens Gdns Gateway Glen Glens Green Greens Grove Groves Harbor Harbors Haven Heights Hill Hills
  Hollow Inlet Island Islands Isle Junction Junctions Key Keys Knoll Knolls Lake Lakes Land Landing
  Light Lights Loaf Lock Locks Lodge Loop Mall Manor Meadow Meadows Mill Mills Mission Motorway Mount
  Mountain Neck Orchard Oval Overpass Park Parks Pass Path Pike Pine Pines Plain Plains Point Points
  Port Ports Prairie Radial Ramp Ranch Rapids Rest Ridge Ridges Rise River Roads Route Row Rue Run Shoal
  Shoals Shore Shores Skyway Spring Springs Spur Spurs Squares Station Stravenue Stream Streets Summit
  Trace Track Trafficway Trail Tunnel Underpass Union Unions Vale Valley Viaduct View Views Village
  Villages Ville Vista Walk Walks Wall Ways Well Wells Woods`);
// Types written before the name (Romance languages, Polish, Romanian, Czech); the second list is
// also written in lower case ("12 rue de Rivoli", "ul. Marszałkowska").
const PREFIX_TYPES = list(`Rue Avenue Av. Boulevard Bd Bld Chemin Ch. Place Allée Impasse Quai Cours Route
  Rte Passage Promenade Esplanade Faubourg Calle C/ Avenida Avda. Plaza Pza. Paseo Camino Carretera
  Ctra. Ronda Travesía Rambla Carrer Passeig Rúa Praza Rua Praça Largo Travessa Estrada Alameda Via
  Viale V.le Piazza P.za Piazzale Corso C.so Vicolo Strada Lungomare Contrada Salita Borgo Ul. Ulica
  Al. Aleja Aleje Pl. Plac Os. Osiedle Str. Bulevardul Calea Aleea Intrarea Șoseaua Soseaua Splaiul Piața
  Náměstí Nám. Třída Marginal Rodovia Οδός Οδ. Λεωφόρος Λεωφ. Πλατεία Πλ.`);
const LOWER_PREFIX_TYPES = list(`rue avenue av. boulevard bd chemin place allée impasse quai cours route
  ul. al. pl. os. str. náměstí nám. вул. вулиця ул. улица просп. проспект пл. площа площадь бульв. бульвар
  пров. провулок`);
// Types written after the name and before the number (German, Dutch, Nordic, Hungarian).
const AFTER_TYPES = list(`Straße Strasse Str. Platz Allee Weg Gasse Damm Ufer Chaussee Markt Steig gate
  gata gatan vei veien veg vegen vej gade väg vägen plass torv torg katu tie utca u. út útja tér körút
  krt. köz sor sétány rakpart straat laan plein gracht kade singel iela gatve laukums aleja dambis bulvāris
  prospekts šoseja gāte майдан`);
// Endings of compound street words ("Hauptstraße", "Keizersgracht", "Kiannonkatu", "Laugavegur").
const COMPOUND_ENDINGS = list(`straße strasse gasse weg allee platz damm ufer chaussee markt steig graben
  straat laan gracht plein kade singel dijk dreef steeg vej gade stræde vænget gatan vägen gata gränd
  torget veien vegen veg vei plass torv katu tie kuja polku tori vegur braut stræti straeti tänav`);
const UNIT_WORDS = list(`Apt Apartment Appt App Suite Ste Unit Flat Floor Fl Level Lvl Room Rm Bldg
  Building Block Blk Wohnung Whg Piso Planta Puerta Pta Esc Escalera Int Interno Scala Lok Bte Bloc Bl.
  Scara Sc. Etaj Et. Ap. Apto Stan Kat Dz. кв.`);
const COUNTRIES = `United States of America|United States|USA|U.S.A.|US|Canada|Mexico|Brazil|Argentina|
  Chile|Colombia|Peru|United Kingdom|UK|U.K.|Great Britain|England|Scotland|Wales|Northern Ireland|
  Ireland|France|Germany|Deutschland|Austria|Österreich|Switzerland|Schweiz|Suisse|Svizzera|Belgium|
  Belgique|België|The Netherlands|Netherlands|Nederland|Luxembourg|Spain|España|Portugal|Italy|Italia|
  Greece|Cyprus|Malta|Poland|Polska|Czech Republic|Czechia|Slovakia|Hungary|Magyarország|Slovenia|
  Croatia|Serbia|Romania|Bulgaria|Denmark|Danmark|Norway|Norge|Sweden|Sverige|Finland|Suomi|Iceland|
  Ísland|Greenland|Estonia|Latvia|Lithuania|Ukraine|Turkey|Türkiye|Israel|India|China|Japan|
  South Korea|Singapore|Australia|New Zealand|South Africa|Nigeria|Kenya|Egypt|Morocco|Tunisia`
  .split("|")
  .map((c) => c.trim().replace(/\s+/g, " "));
// Title-case words that start many "Word 12" phrases which are not streets.
const NOT_STREETS = list(`January February March April May June July August September October November
  December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday Friday
  Saturday Sunday Gate Terminal Platform Dock Bay Hall Section Chapter Page Version Step Phase Stage
  Day Week Year Quarter Track Model Windows Office Order Invoice Ticket Flight Seat Table Item Number
  No Nr`);

const L = "\\p{L}\\p{M}";
const END = `(?![${L}\\p{N}])`;
const literal = (w: string) => w.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&").replace(/ /g, "[ \\t]+");
const titleAndUpper = (w: string) => [w, w.toUpperCase()];
/** A word as written ("Street", "STREET") and with a lower-case initial ("street"). */
const anyInitial = (w: string) => {
  const initial = w[0] ?? "";
  return [w.toUpperCase(), `[${initial}${initial.toLowerCase()}]${literal(w.slice(1))}`];
};
/**
 * Alternation of words, longest first, closed by one word boundary unless they end in "." or "/"
 * (one boundary for the group keeps the compiled pattern small). Entries starting with "[" are
 * already patterns.
 */
function words(ws: readonly string[]): string {
  const sorted = [...new Set(ws)].sort((a, b) => b.length - a.length);
  const alternation = (group: string[]) => group.map((w) => (w.startsWith("[") ? w : literal(w))).join("|");
  const closed = sorted.filter((w) => /[./]$/.test(w));
  const open = `(?:${alternation(sorted.filter((w) => !/[./]$/.test(w)))})${END}`;
  return closed.length === 0 ? open : `(?:${open}|${alternation(closed)})`;
}

const CONNECTORS = `(?:${list(`de del della delle dei degli di da dal das do dos du des la le les el los las
  van von der den ten ter het zum zur am an auf im z ze na nad pod of the sur sous en aan op bij upon
  on`).join("|")})`;
const GAP = `[ \\t]+(?:${CONNECTORS}[ \\t]+){0,2}`;
const UNIT_WORD = words(UNIT_WORDS.flatMap(anyInitial));
const START = `(?<![${L}\\p{N}.,:/$€£#+-])`;
const NUMBER_FIRST = `${START}(?:\\d{1,5}[A-Za-z]?[/-])?\\d{1,5}(?:[A-Za-z]${END})?,?[ \\t]+`;
const NUMBER_AFTER = `,?[ \\t]+(?:(?:Nr|No|nr|no|n[º°o]|N[º°o])\\.?[ \\t]?)?\\d{1,5}(?:[A-Za-z](?![${L}]))?(?:[-/]\\d{1,5}[A-Za-z]?)?(?![${L}\\p{N}]|[.,:/-]?\\d)`;
const EN_TYPE = `${words([...EN_TYPES, ...EN_ABBREVIATIONS].flatMap(anyInitial))}\\.?`;
const DIRECTION = `(?:[ \\t]+(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)${END})?`;
const AFTER_TYPE = words(AFTER_TYPES.flatMap(anyInitial));
const COMPOUND_END = COMPOUND_ENDINGS.flatMap((e) => [e, e.toUpperCase()]).join("|");

/**
 * The street forms over one word shape: `initial` is the first letter of a name word, capital in
 * ordinary text, any letter in text typed in lower case (where only a cue makes them addresses).
 */
function streetForms(initial: string, prefixTypes: readonly string[]) {
  const word = `${initial}[${L}'’-]{0,30}`;
  // A short word may carry an abbreviation's dot ("St. John's"); a longer one leaves it to the sentence.
  const dotted = `(?:${initial}[${L}]{0,2}\\.|${word})${END}`;
  const nameWord = `(?!${UNIT_WORD})(?:${dotted}|\\d{1,3}(?:st|nd|rd|th)${END})`;
  const name = `(?:${CONNECTORS}[ \\t]+){0,2}${nameWord}(?:${GAP}${nameWord}){0,3}`;
  // An adjective before a compound street word: "Brucker Bundesstraße", "Nieuwe Keizersgracht".
  const adjective = `(?:${initial}[${L}-]{1,30}(?<=er|e|en|es)[ \\t]+)?`;
  const compound = `${initial}[${L}-]{1,40}(?<=${COMPOUND_END})(?:(?<=str)\\.)?${END}`;
  const prefix = `(?<!\\bet )${words(prefixTypes)}[ \\t]*`;
  return {
    word,
    dotted,
    nameWord,
    // "221B Baker Street", "1600 Amphitheatre Pkwy NW"
    numberFirst: `${NUMBER_FIRST}${nameWord}(?:${GAP}${nameWord}){0,3}[ \\t]+${EN_TYPE}${DIRECTION}`,
    // "99 rue de Rivoli", "12 Hauptstraße"
    numberFirstPrefix: `${NUMBER_FIRST}${prefix}${name}`,
    numberFirstCompound: `${NUMBER_FIRST}${adjective}${compound}`,
    // "Via Roma 1", "Calle Mayor, 7", "Villacher Straße 89", "Keizersgracht 123"
    prefixFirst: `${START}${prefix}${name}${NUMBER_AFTER}`,
    // "Aleea Tropicelor, Bloc 15": no house number, a building or unit instead.
    prefixUnit: `${START}${prefix}${name}(?=,?[ \\t]+${UNIT_WORD})`,
    typeAfter: `${START}(?:${nameWord}${GAP}){1,3}${AFTER_TYPE}${NUMBER_AFTER}`,
    compoundFirst: `${START}${adjective}${compound}${NUMBER_AFTER}`,
  };
}

const CASED = streetForms("\\p{Lu}", [...PREFIX_TYPES.flatMap(titleAndUpper), ...LOWER_PREFIX_TYPES]);
const STREET = `${CASED.nameWord}(?:${GAP}${CASED.nameWord}){0,3}`;
const PO_BOX =
  "(?:P\\.?[ \\t]?O\\.?[ \\t]?Box|Post[ \\t]+Office[ \\t]+Box|GPO[ \\t]+Box|Postfach|Postbus|Postboks|Boîte[ \\t]+postale|Apartado(?:[ \\t]+de[ \\t]+correos)?|Apdo\\.|Caixa[ \\t]+postal|Casella[ \\t]+postale|Skrytka[ \\t]+pocztowa)";

// typed: a street type, PO box or intersection; weak: an English type that also ends place names;
// cued: needs an address lead-in or a tail (bare names, text in lower case); military: needs APO/FPO/DPO.
type Kind = "typed" | "weak" | "cued" | "military";
const core = (kind: Kind, pattern: string, flags = "gu") => ({ kind, pattern: new RegExp(pattern, flags) });
const CORES = [
  core("typed", CASED.numberFirst),
  core("typed", CASED.numberFirstPrefix),
  core("typed", CASED.numberFirstCompound),
  core("typed", CASED.prefixFirst),
  core("typed", CASED.prefixUnit),
  core("typed", CASED.typeAfter),
  core("typed", CASED.compoundFirst),
  core("weak", `${NUMBER_FIRST}${STREET}[ \\t]+${words(EN_WEAK_TYPES.flatMap(titleAndUpper))}`),
  // "113 S Main, Apt 790": a house number and a name, with a lead-in or a tail.
  core("cued", `${START}\\d{1,5}[A-Za-z]?[ \\t]+(?!${words(NOT_STREETS)})${STREET}`),
  // "corner of 5th Avenue and Main Street": the two streets, without the cue.
  core(
    "typed",
    `(?<=(?<![${L}])[Cc]orner[ \\t]+of[ \\t]+)(?:\\d{1,5}[A-Za-z]?[ \\t]+)?${CASED.nameWord}(?:[ \\t]+[${L}\\p{N}.'’-]{1,30}){0,4}?[ \\t]+(?:and|&)[ \\t]+(?:\\d{1,5}[A-Za-z]?[ \\t]+)?${STREET}(?:[ \\t]+${EN_TYPE})?(?:${NUMBER_AFTER})?`,
  ),
  core(
    "typed",
    `(?<![\\p{L}\\p{N}])${PO_BOX}[ \\t]*(?:No\\.?[ \\t]*)?\\d{1,6}(?:[ \\t]\\d{2,3}){0,2}(?!\\p{N})`,
    "giu",
  ),
  core(
    "military",
    `(?<![\\p{L}\\p{N}])(?:(?:PSC|CMR|Unit)[ \\t]+\\d{1,5},?[ \\t]+Box[ \\t]+\\d{1,5}|(?:USS|USNS|USNV|USCGC)[ \\t]+${CASED.word}(?:[ \\t]+${CASED.word}){0,2})(?!\\p{N})`,
    "giu",
  ),
  // "Kesk 53": a street without a type word.
  core(
    "cued",
    `${START}(?!${words(NOT_STREETS)})${CASED.nameWord}(?:${GAP}${CASED.nameWord}){0,2}${NUMBER_AFTER}`,
  ),
];
// Streets typed in lower case ("i live at 12 main street"), tried only right after a lead-in.
const LOWER_CASE_CORES = Object.entries(streetForms(`[${L}]`, PREFIX_TYPES.flatMap(anyInitial)))
  .filter(([form]) => !["word", "dotted", "nameWord"].includes(form))
  .map(([, pattern]) => core("cued", pattern, "uy"));

// Tail parts. Codes: US ZIP(+4), UK, Canadian, Irish; before a city also the continental shapes.
// ZIP and ZIP+4; also a Brazilian CEP (12345-678).
const US = "\\d{5}(?:-\\d{4}|-\\d{3})?";
const UK = "[A-Z]{1,2}\\d[A-Z\\d]?[ \\t]?\\d[A-Z]{2}";
const CA = "[A-Z]\\d[A-Z][ \\t]?\\d[A-Z]\\d";
const IE = "[A-Z]\\d{2}[ \\t]?[A-Z\\d]{4}";
const CONTINENTAL = `(?:[A-Z]{1,3}-)?(?:\\d{5}-\\d{3}|\\d{4}-\\d{3}|\\d{2}-\\d{3}|\\d{4}[ \\t]?[A-Z]{2}(?=[ \\t])|\\d{3}[ \\t]\\d{2}|\\d{4,5})`;
const CITY = `(?!${words(NOT_STREETS)})${CASED.dotted}(?:[ \\t]+(?:${CONNECTORS}[ \\t]+){0,2}(?!${words(NOT_STREETS)})${CASED.dotted}){0,3}`;
// Not the letters of a prefixed postcode ("LV-4407").
const STATE = `[A-Z]{2,3}(?![${L}\\p{N}-])`;
const UNIT = `(?:${UNIT_WORD}\\.?[ \\t]*(?:(?:No|Nr)\\.?[ \\t]*)?#?[ \\t]?(?:[A-Za-z]?\\d{1,5}[A-Za-z]?(?:[-/]\\d{1,4}[A-Za-z]?)?|[A-Z])|(?<hash>#[ \\t]?\\d{1,5}[A-Za-z]?)|\\d{1,2}(?:st|nd|rd|th)[ \\t]+(?:Floor|Fl\\.?)|\\d{1,2}[ºª](?:[ \\t]?(?:\\d{1,2}[ºª]|[A-Z]))?|\\d{1,2}ος)${END}`;

type Part = "unit" | "military" | "coded" | "code" | "country" | "soft";
const tailPart = (part: Part, pattern: string, flags = "uy") => ({
  part,
  pattern: new RegExp(pattern, flags),
});
const TAIL_PARTS = [
  tailPart("unit", UNIT),
  tailPart("military", `(?:APO|FPO|DPO)[ \\t]+(?:AA|AE|AP)[ \\t]+${US}${END}`, "iuy"),
  tailPart("coded", `(?<code>${CONTINENTAL})[ \\t]+${CITY}`),
  tailPart("coded", `${CITY},?[ \\t]+[A-Z]{2,3},?[ \\t]+(?:${US}|${CA}|\\d{4})${END}`),
  tailPart("coded", `${CITY},?[ \\t]+(?:${UK}|${CA}|${IE}|${US}|\\d{6})${END}`),
  tailPart("coded", `${STATE},?[ \\t]+(?:\\d{5}-\\d{3}|${US}|${CA}|\\d{4})${END}`),
  tailPart(
    "code",
    `(?<code>${UK}|${CA}|${IE}|\\d{5}-\\d{3}|${US}|\\d{6}|\\d{4}-\\d{3}|\\d{2}-\\d{3}|[A-Z]{2}-?\\d{4,5}|\\d{4})${END}`,
  ),
  tailPart("country", words(COUNTRIES.flatMap(titleAndUpper))),
  tailPart("soft", `${CITY}(?:,?[ \\t]+${STATE})?`),
];
const SEPARATOR =
  /\.?(?:[ \t]*,[ \t]*(?:\r?\n[ \t>]*)?|[ \t]*\r?\n[ \t>]*(?:,[ \t]*)?|[ \t]+[-–][ \t]+|[ \t]+)/y;
const SENTENCE_END = /[ \t]*(?:[.!?;)]|\r?\n[ \t>]*\r?\n|$)/y;
const LEFT_UNIT = new RegExp(`(?<![${L}\\p{N}])${UNIT}[ \\t]*,?[ \\t]*(?:\\r?\\n[ \\t>]*)?$`, "u");
const LEAD_IN_WORDS = `(?<![${L}])(?:(?:address(?:es)?|adresse|anschrift|dirección|direccion|indirizzo|adres|adresa|osoite)[?.]?(?:[ \\t]+(?:it|that))?(?:[ \\t]+(?:is|was|will[ \\t]+be)|'s)?[ \\t]*[:=-]?|(?:lives?|lived|living|resides?|resided|residing|located|situated|based|stays?|stayed|staying)[ \\t]+(?:at|on|in)|(?:ship|shipped|send|sent|deliver|delivered|mail|mailed|post|posted|return|returned|forward|forwarded|move|moved|moving|relocated?)(?:[ \\t]+(?:it|them|this|that|everything|the[ \\t]+\\p{L}+))?[ \\t]+to)[ \\t]*(?:\\r?\\n[ \\t]*)?`;
// "lives at", "address:", "ship to": what may come right before a street without a type word.
// A bare number may stand between the lead-in and a street written number-last ("address: 12 Kesk 53").
const HOUSE_NUMBER = "\\d{1,5}[A-Za-z]?[ \\t]+";
const LEAD_IN = new RegExp(`${LEAD_IN_WORDS}(?:${HOUSE_NUMBER})?$`, "iu");
const LEFT_NUMBER = new RegExp(`(?<![${L}\\p{N}.,:/$€£#+-])${HOUSE_NUMBER}$`, "u");
const AFTER_LEAD_IN_NUMBER = new RegExp(HOUSE_NUMBER, "uy");
const LEAD_INS = new RegExp(LEAD_IN_WORDS, "giu");
// What may follow a bare "Name 12" that has no tail: the end of a clause or a linking word.
const BARE_END =
  /[ \t]*(?:[,.;:!?)\r\n]|$)|[ \t]+(?:in|and|near|since|until|for|from|on|at|by|after|before|please)(?![\p{L}])/uy;
// A final dot stays when it closes an abbreviation ("Main St.", "U.S.A."), not when it ends a sentence.
const ABBREVIATION_DOT = new RegExp(
  `(?:(?<![${L}])${words(EN_ABBREVIATIONS.flatMap(anyInitial))}|\\.\\p{Lu})\\.$`,
  "u",
);
const ADDRESS_CONTEXT = contextWords(
  list(`address addresses adresse anschrift dirección indirizzo adres live lives lived living reside
    resides residence located location ship shipping shipped deliver delivery mail mailing send sent
    moved street billing postal zip postcode headquarters office visit`),
);

interface Tail {
  end: number;
  /** A postcode, a city with its state and code, or a country. */
  coded: boolean;
  unit: boolean;
  military: boolean;
}

/** Reads the address tail from `from`; soft parts count only when a coded part or a sentence end follows. */
function readTail(text: string, from: number, counter: { runs: number }): Tail {
  const tail: Tail = { end: from, coded: false, unit: false, military: false };
  let pos = from;
  let softPending = false;
  let afterUnit = false;
  for (let parts = 0; parts < 8; parts++) {
    SEPARATOR.lastIndex = pos;
    counter.runs++;
    const sep = SEPARATOR.exec(text);
    // "Erzsébet tér 19." : the dot of an ordinal house number, not the end of a sentence.
    if (!sep || (sep[0].startsWith(".") && !/\d/.test(text[pos - 1] ?? ""))) break;
    const lineBreak = sep[0].includes("\n");
    const spaceOnly = !lineBreak && !/[,–-]/.test(sep[0]);
    const at = pos + sep[0].length;
    let matched: { part: Part; end: number; hash: boolean } | undefined;
    for (const { part, pattern } of TAIL_PARTS) {
      pattern.lastIndex = at;
      counter.runs++;
      const m = pattern.exec(text);
      if (!m) continue;
      const code = m.groups?.code ?? "";
      // A lone four-digit number after a comma is as often a year as a postcode.
      if (part === "code" && !softPending && !lineBreak) continue;
      if (part === "code" && /^\d{4}$/.test(code) && !softPending) continue;
      if (part === "coded" && spaceOnly && /^\d{4}$/.test(code)) continue;
      // "Apt. 615 Moosleerau": after a unit a city may follow with a space only.
      if (part === "soft" && spaceOnly && !afterUnit) continue;
      matched = { part, end: at + m[0].length, hash: m.groups?.hash !== undefined };
      break;
    }
    if (!matched) break;
    pos = matched.end;
    afterUnit = matched.part === "unit";
    if (matched.part === "soft") {
      softPending = true;
      continue;
    }
    softPending = false;
    tail.end = pos;
    tail.coded ||= matched.part !== "unit";
    // "#6" extends an address but is too common ("Game #6") to make one.
    tail.unit ||= matched.part === "unit" && !matched.hash;
    tail.military ||= matched.part === "military";
  }
  if (softPending) {
    SENTENCE_END.lastIndex = pos;
    counter.runs++;
    if (SENTENCE_END.test(text)) tail.end = pos;
  }
  return tail;
}

function likelihood(kind: Kind, tail: Tail, context: boolean, leadIn: boolean): Likelihood | undefined {
  switch (kind) {
    case "typed":
      return tail.coded || tail.unit || context ? "LIKELIHOOD_TYPE_VERY_LIKELY" : "LIKELIHOOD_TYPE_LIKELY";
    case "weak":
      if (tail.coded || tail.unit) return context ? "LIKELIHOOD_TYPE_VERY_LIKELY" : "LIKELIHOOD_TYPE_LIKELY";
      return context ? "LIKELIHOOD_TYPE_POSSIBLE" : "LIKELIHOOD_TYPE_UNLIKELY";
    case "cued":
      if (!leadIn && !tail.coded && !tail.unit) return undefined;
      return leadIn && tail.coded ? "LIKELIHOOD_TYPE_LIKELY" : "LIKELIHOOD_TYPE_POSSIBLE";
    case "military":
      return tail.military ? "LIKELIHOOD_TYPE_VERY_LIKELY" : undefined;
  }
}

/**
 * Finds street addresses: `detectStreetAddresses("Ship to Via Roma 1, 00184 Roma")` reports
 * "Via Roma 1, 00184 Roma". `counter.runs` is raised by one per pattern execution.
 */
export function detectStreetAddresses(text: string, counter = { runs: 0 }): Finding[] {
  const candidates: Finding[] = [];
  for (const { kind, pattern } of CORES) {
    pattern.lastIndex = 0;
    for (;;) {
      counter.runs += 2;
      const m = pattern.exec(text);
      if (!m) break;
      const leadIn = kind === "cued" && LEAD_IN.test(text.slice(Math.max(0, m.index - 48), m.index));
      const found = candidate(text, kind, m.index, m.index + m[0].length, leadIn, counter);
      if (found) candidates.push(found);
      // Another core may start inside a rejected one; overlapping accepted ones are merged below.
      pattern.lastIndex = found ? m.index + m[0].length : m.index + 1;
    }
  }
  LEAD_INS.lastIndex = 0;
  for (;;) {
    counter.runs++;
    const lead = LEAD_INS.exec(text);
    if (!lead) break;
    const afterLead = lead.index + lead[0].length;
    AFTER_LEAD_IN_NUMBER.lastIndex = afterLead;
    counter.runs++;
    const starts = AFTER_LEAD_IN_NUMBER.test(text)
      ? [afterLead, AFTER_LEAD_IN_NUMBER.lastIndex]
      : [afterLead];
    for (const at of starts) {
      for (const { kind, pattern } of LOWER_CASE_CORES) {
        pattern.lastIndex = at;
        counter.runs++;
        const m = pattern.exec(text);
        const found = m && candidate(text, kind, at, at + m[0].length, true, counter);
        if (found) candidates.push(found);
      }
    }
  }
  return merge(candidates);
}

/** Widens a core over its tail and a unit before it, and rates it; undefined when it is no address. */
function candidate(
  text: string,
  kind: Kind,
  coreStart: number,
  coreEnd: number,
  leadIn: boolean,
  counter: { runs: number },
): Finding | undefined {
  const tail = readTail(text, coreEnd, counter);
  if (kind === "cued" && tail.end === coreEnd) {
    BARE_END.lastIndex = coreEnd;
    counter.runs++;
    if (!BARE_END.test(text)) return undefined;
  }
  let end = tail.end;
  if (text[end - 1] === "." && !ABBREVIATION_DOT.test(text.slice(Math.max(0, end - 6), end))) end--;
  counter.runs += 2;
  // A second number before the street ("86036 Rua do Arenque 1634", "9554 62 Rue Gafsa"), then a unit.
  const number = LEFT_NUMBER.exec(text.slice(Math.max(0, coreStart - 12), coreStart));
  const numberStart = coreStart - (number?.[0].length ?? 0);
  const unit = LEFT_UNIT.exec(text.slice(Math.max(0, numberStart - 32), numberStart));
  const start = numberStart - (unit?.[0].length ?? 0);
  const found = likelihood(kind, tail, hasContext(text, start, end, ADDRESS_CONTEXT), leadIn);
  return found && { type: "STREET_ADDRESS", likelihood: found, start, end };
}

/** Joins overlapping candidates (cores of one address), keeping the highest likelihood. */
function merge(candidates: Finding[]): Finding[] {
  const merged: Finding[] = [];
  for (const c of candidates.sort((a, b) => a.start - b.start || b.end - a.end)) {
    const last = merged.at(-1);
    if (last && c.start < last.end) {
      last.end = Math.max(last.end, c.end);
      if (likelihoodRank(c.likelihood) > likelihoodRank(last.likelihood)) last.likelihood = c.likelihood;
    } else merged.push({ ...c });
  }
  return merged;
}
