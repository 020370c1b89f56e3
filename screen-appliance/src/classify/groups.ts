/**
 * Words that name a group of people (ethnicities, nationalities and demonyms, religions, genders
 * and sexualities, and generic collective nouns) and personal pronouns, for the group-relation
 * features of features.ts. A general vocabulary, written for the feature and not taken from any
 * training or evaluation set; singular and plural forms are both listed where they differ by more
 * than a final "s".
 */

const ETHNIC = `black blacks white whites asian asians hispanic hispanics latino latinos latina latinas latinx
arab arabs african africans caucasian caucasians indigenous native natives aboriginal aboriginals brown
colored coloured ethnic ethnics minority minorities roma romani gypsy gypsies pacific islander islanders
middle eastern biracial multiracial jewish jew jews semitic asiatic oriental orientals negro negroes`;

const NATIONAL = `american americans mexican mexicans canadian canadians brazilian brazilians colombian colombians
venezuelan venezuelans argentinian argentinians argentine peruvian peruvians chilean chileans cuban cubans
haitian haitians dominican dominicans puerto rican ricans jamaican jamaicans guatemalan guatemalans
salvadoran salvadorans honduran hondurans british brits english englishman englishmen scottish scots
scot welsh irish irishman irishmen french frenchman frenchmen german germans dutch belgian belgians swiss
austrian austrians italian italians spanish spaniard spaniards portuguese greek greeks turkish turk turks
polish pole poles czech czechs slovak slovaks hungarian hungarians romanian romanians bulgarian
bulgarians serbian serbians serb serbs croatian croatians croat croats bosnian bosnians albanian
albanians ukrainian ukrainians russian russians belarusian lithuanian latvian estonian finnish finn
finns swedish swede swedes norwegian norwegians danish dane danes icelandic chinese japanese korean
koreans vietnamese thai filipino filipinos filipina indonesian indonesians malaysian malaysians
indian indians pakistani pakistanis bangladeshi bangladeshis afghan afghans afghani iranian iranians
persian persians iraqi iraqis syrian syrians lebanese palestinian palestinians israeli israelis
jordanian jordanians saudi saudis egyptian egyptians moroccan moroccans algerian algerians tunisian
tunisians libyan libyans nigerian nigerians ghanaian ghanaians kenyan kenyans ethiopian ethiopians
somali somalis somalian somalians sudanese congolese ugandan ugandans south australian australians
aussie aussies kiwi kiwis tibetan tibetans nepali nepalese sri lankan lankans kurd kurds kurdish
chechen chechens armenian armenians georgian georgians azerbaijani uzbek kazakh mongolian mongolians
foreigner foreigners immigrant immigrants migrant migrants emigrant emigrants refugee refugees
expat expats alien aliens illegals tourist tourists`;

const RELIGION = `muslim muslims moslem moslems islamic christian christians catholic catholics protestant
protestants mormon mormons evangelical evangelicals hindu hindus sikh sikhs buddhist buddhists atheist
atheists pagan pagans`;

const GENDER = `women woman men man girls girl boys boy ladies lady gentlemen females female males male wives
husbands mothers moms fathers dads gay gays lesbian lesbians bisexual bisexuals homosexual homosexuals
queer queers trans transgender transgenders feminist feminists`;

const COLLECTIVE = `people peoples folks folk guys persons population populations community communities
tribe tribes race races nation nations kind everyone they`;

const GROUPS = new Set(
  `${ETHNIC} ${NATIONAL} ${RELIGION} ${GENDER} ${COLLECTIVE}`.split(/\s+/).filter(Boolean),
);

const PRONOUNS = new Set(["he", "she", "you", "him", "her", "them", "u", "ya", "his", "hers", "your"]);

export function isGroupWord(word: string): boolean {
  return GROUPS.has(word);
}

const CATEGORIES = new Map<string, string>();
for (const [category, words] of Object.entries({
  collective: COLLECTIVE,
  gender: GENDER,
  religion: RELIGION,
  national: NATIONAL,
  ethnic: ETHNIC,
}))
  for (const w of words.split(/\s+/)) if (w) CATEGORIES.set(w, category);

/** The group words of one kind ("ethnic", "national", "religion", "gender", "collective"). */
export function groupWords(category: string): string[] {
  return [...CATEGORIES].flatMap(([word, c]) => (c === category ? [word] : []));
}

/** The kind of group a group word names: ethnic, national, religion, gender or collective. */
export function groupCategory(word: string): string | undefined {
  return CATEGORIES.get(word);
}

export function isPersonPronoun(word: string): boolean {
  return PRONOUNS.has(word);
}
