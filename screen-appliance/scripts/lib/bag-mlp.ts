/**
 * A hashed embedding-bag MLP and its trainer, in plain TypeScript. Each item (a token with its
 * context features, or a whole text) is a bag of table rows; the model sums their embeddings,
 * scales the sum, adds a bias, applies ReLU and a linear layer to one logit per class.
 *
 * Training is minibatch Adam with cross-entropy (softmax, one class per item) or binary
 * cross-entropy (sigmoid, independent labels). Embedding rows are updated lazily, only when a
 * batch touches them, which keeps an epoch linear in the number of features seen rather than in
 * the size of the table. The same forward pass is used to check the exported ONNX model.
 *
 * A model may also read pretrained word vectors (lib/word-vectors.ts): rows at and past `buckets`
 * are words, whose fixed vectors a learnt projection maps into the hidden space. `bake()` turns such
 * a model into a plain one whose table holds each word's projected row after the hashed rows, which
 * is what the ONNX file stores (src/ml/vocabulary.ts).
 */

export interface Item {
  rows: Int32Array;
  scale: number;
  /** Softmax: the class index. Sigmoid: one 0/1 target per class. */
  target: number | Float32Array;
  weight?: number;
}

export interface TrainOptions {
  epochs: number;
  batchSize: number;
  learningRate: number;
  seed: number;
  /** Probability of leaving out each feature row of an item in a training step (not row 0). */
  featureDropout?: number;
  /** Called after each epoch, e.g. to print a development-set score. */
  onEpoch?: (epoch: number, meanLoss: number) => void;
}

/** Fixed word vectors, row-major [count, width]; table row `buckets + i` is vector i. */
export interface Pretrained {
  readonly vectors: Float32Array;
  readonly width: number;
}

export class BagMlp {
  readonly table: Float32Array;
  readonly b1: Float32Array;
  readonly w2: Float32Array;
  readonly b2: Float32Array;
  /** With pretrained vectors: their projection into the hidden space, [width, dims]. */
  readonly proj: Float32Array | undefined;

  constructor(
    readonly buckets: number,
    readonly dims: number,
    readonly classes: number,
    readonly output: "softmax" | "sigmoid",
    seed = 1,
    readonly pretrained?: Pretrained,
  ) {
    const random = mulberry32(seed);
    // The table starts at zero: rows that training never touches (features never seen) then add
    // nothing at inference instead of noise. Gradients still reach every touched row through w2.
    this.table = new Float32Array(buckets * dims);
    this.b1 = new Float32Array(dims).fill(0.01);
    this.w2 = new Float32Array(dims * classes);
    const limit = Math.sqrt(6 / (dims + classes));
    for (let i = 0; i < this.w2.length; i++) this.w2[i] = (random() * 2 - 1) * limit;
    this.b2 = new Float32Array(classes);
    if (pretrained) {
      const width = pretrained.width;
      const pLimit = Math.sqrt(6 / (width + dims));
      this.proj = new Float32Array(width * dims);
      for (let i = 0; i < this.proj.length; i++) this.proj[i] = (random() * 2 - 1) * pLimit;
    }
  }

  /** Adds the hidden-space row of table row `row` (hashed or pretrained) to `into`. */
  private addRow(row: number, into: Float32Array): void {
    const { dims } = this;
    if (row < this.buckets) {
      const base = row * dims;
      for (let d = 0; d < dims; d++) into[d] = (into[d] ?? 0) + (this.table[base + d] ?? 0);
      return;
    }
    const { vectors, width } = this.pretrained as Pretrained;
    const proj = this.proj as Float32Array;
    const base = (row - this.buckets) * width;
    for (let j = 0; j < width; j++) {
      const v = vectors[base + j] ?? 0;
      if (v === 0) continue;
      for (let d = 0; d < dims; d++) into[d] = (into[d] ?? 0) + v * (proj[j * dims + d] ?? 0);
    }
  }

  /**
   * A plain model (no pretrained vectors) with the same outputs: its table holds the hashed rows and
   * then each pretrained word's projected row. Without pretrained vectors, the model itself.
   */
  bake(): BagMlp {
    const { pretrained } = this;
    if (!pretrained) return this;
    const count = pretrained.vectors.length / pretrained.width;
    const baked = new BagMlp(this.buckets + count, this.dims, this.classes, this.output);
    baked.table.set(this.table);
    for (let i = 0; i < count; i++) {
      const row = new Float32Array(this.dims);
      this.addRow(this.buckets + i, row);
      baked.table.set(row, (this.buckets + i) * this.dims);
    }
    baked.b1.set(this.b1);
    baked.w2.set(this.w2);
    baked.b2.set(this.b2);
    return baked;
  }

  /** Hidden activations and class probabilities for one item. */
  forward(rows: Int32Array, scale: number): { hidden: Float32Array; probs: Float32Array } {
    const { dims, classes } = this;
    const hidden = new Float32Array(dims);
    for (const row of rows) if (row > 0) this.addRow(row, hidden);
    for (let d = 0; d < dims; d++) hidden[d] = Math.max(0, (hidden[d] ?? 0) * scale + (this.b1[d] ?? 0));
    const logits = new Float32Array(classes);
    for (let c = 0; c < classes; c++) {
      let z = this.b2[c] ?? 0;
      for (let d = 0; d < dims; d++) z += (hidden[d] ?? 0) * (this.w2[d * classes + c] ?? 0);
      logits[c] = z;
    }
    return { hidden, probs: this.output === "softmax" ? softmax(logits) : logits.map(sigmoid) };
  }

  /** Adds the projection's gradient from one pretrained row's occurrence. */
  private addProjGradient(row: number, gHidden: Float32Array, scale: number, gProj: Float32Array): void {
    const { dims } = this;
    const { vectors, width } = this.pretrained as Pretrained;
    const base = (row - this.buckets) * width;
    for (let j = 0; j < width; j++) {
      const v = (vectors[base + j] ?? 0) * scale;
      if (v === 0) continue;
      for (let d = 0; d < dims; d++) gProj[j * dims + d] = (gProj[j * dims + d] ?? 0) + v * (gHidden[d] ?? 0);
    }
  }

  train(items: Item[], options: TrainOptions): void {
    const { dims, classes } = this;
    const adam = new LazyAdam(this, options.learningRate);
    const random = mulberry32(options.seed);
    const order = items.map((_, i) => i);
    const gHidden = new Float32Array(dims);
    const gW2 = new Float32Array(dims * classes);
    const gB2 = new Float32Array(classes);
    const gB1 = new Float32Array(dims);
    const gRows = new Map<number, Float32Array>();
    const gProj = this.proj ? new Float32Array(this.proj.length) : undefined;
    const dropout = options.featureDropout ?? 0;

    for (let epoch = 1; epoch <= options.epochs; epoch++) {
      shuffle(order, random);
      let lossSum = 0;
      for (let startAt = 0; startAt < order.length; startAt += options.batchSize) {
        gW2.fill(0);
        gB2.fill(0);
        gB1.fill(0);
        gRows.clear();
        gProj?.fill(0);
        const batch = order.slice(startAt, startAt + options.batchSize);
        for (const index of batch) {
          const item = items[index] as Item;
          const weight = (item.weight ?? 1) / batch.length;
          // Dropped rows are negated (-row) for this step, which forward and the update skip.
          const rows = dropout > 0 ? item.rows.map((r) => (r > 0 && random() < dropout ? -r : r)) : item.rows;
          const { hidden, probs } = this.forward(rows, item.scale);
          // dLoss/dLogit is (p - y) for both softmax+CE and sigmoid+BCE.
          const gLogits = new Float32Array(classes);
          for (let c = 0; c < classes; c++) {
            const y = typeof item.target === "number" ? (item.target === c ? 1 : 0) : (item.target[c] ?? 0);
            const p = probs[c] ?? 0;
            gLogits[c] = (p - y) * weight;
            if (y > 0) lossSum -= Math.log(Math.max(p, 1e-7)) * (item.weight ?? 1);
            else if (this.output === "sigmoid")
              lossSum -= Math.log(Math.max(1 - p, 1e-7)) * (item.weight ?? 1);
          }
          gHidden.fill(0);
          for (let d = 0; d < dims; d++) {
            const h = hidden[d] ?? 0;
            let g = 0;
            for (let c = 0; c < classes; c++) {
              const gl = gLogits[c] ?? 0;
              gW2[d * classes + c] = (gW2[d * classes + c] ?? 0) + h * gl;
              g += (this.w2[d * classes + c] ?? 0) * gl;
            }
            gHidden[d] = h > 0 ? g : 0;
            gB1[d] = (gB1[d] ?? 0) + (gHidden[d] ?? 0);
          }
          for (let c = 0; c < classes; c++) gB2[c] = (gB2[c] ?? 0) + (gLogits[c] ?? 0);
          for (const row of rows) {
            if (row <= 0) continue;
            if (row >= this.buckets) {
              this.addProjGradient(row, gHidden, item.scale, gProj as Float32Array);
              continue;
            }
            let g = gRows.get(row);
            if (!g) {
              g = new Float32Array(dims);
              gRows.set(row, g);
            }
            for (let d = 0; d < dims; d++) g[d] = (g[d] ?? 0) + (gHidden[d] ?? 0) * item.scale;
          }
        }
        adam.step(gRows, gB1, gW2, gB2, gProj);
      }
      options.onEpoch?.(epoch, lossSum / items.length);
    }
  }
}

/**
 * One model whose logits are the mean of the members' logits: the members' hidden units side by
 * side (their table columns, `b1`), each member's output weights divided by the member count, and
 * the mean output bias. Hidden units never mix, so the merged forward pass (and its ONNX export) is
 * exactly the logit average of the members. All members must share buckets, dims, classes and output.
 */
export function averagedLogits(members: readonly BagMlp[]): BagMlp {
  const first = members[0];
  if (!first) throw new Error("averagedLogits: no members");
  const { buckets, dims, classes, output } = first;
  for (const m of members)
    if (m.buckets !== buckets || m.dims !== dims || m.classes !== classes || m.output !== output)
      throw new Error("averagedLogits: members differ in shape or output");
  const k = members.length;
  const merged = new BagMlp(buckets, dims * k, classes, output);
  merged.b2.fill(0);
  members.forEach((m, j) => {
    for (let row = 0; row < buckets; row++)
      merged.table.set(m.table.subarray(row * dims, (row + 1) * dims), row * dims * k + j * dims);
    merged.b1.set(m.b1, j * dims);
    for (let i = 0; i < dims * classes; i++) merged.w2[j * dims * classes + i] = (m.w2[i] ?? 0) / k;
    for (let c = 0; c < classes; c++) merged.b2[c] = (merged.b2[c] ?? 0) + (m.b2[c] ?? 0) / k;
  });
  return merged;
}

/**
 * Trains `count` members made by `create(seed)` from seeds options.seed, options.seed + 1, ... on
 * the same items and returns their logit average (the one member itself when `count` is 1).
 */
export function trainAveraged(
  count: number,
  create: (seed: number) => BagMlp,
  items: Item[],
  options: Omit<TrainOptions, "onEpoch"> & {
    onEpoch?: (member: number, epoch: number, meanLoss: number) => void;
  },
): BagMlp {
  const members = Array.from({ length: count }, (_, k) => {
    const seed = options.seed + k;
    const member = create(seed);
    member.train(items, {
      ...options,
      seed,
      onEpoch: (epoch, loss) => options.onEpoch?.(k + 1, epoch, loss),
    });
    return member;
  });
  const baked = members.map((m) => m.bake());
  return baked.length === 1 ? (baked[0] as BagMlp) : averagedLogits(baked);
}

/** Adam whose embedding rows keep their own step count, so untouched rows are not decayed. */
class LazyAdam {
  private readonly beta1 = 0.9;
  private readonly beta2 = 0.999;
  private readonly eps = 1e-8;
  private step_ = 0;
  private readonly tableM: Float32Array;
  private readonly tableV: Float32Array;
  private readonly rowSteps: Uint32Array;
  private readonly dense: { param: Float32Array; m: Float32Array; v: Float32Array }[];

  constructor(
    private readonly model: BagMlp,
    private readonly lr: number,
  ) {
    this.tableM = new Float32Array(model.table.length);
    this.tableV = new Float32Array(model.table.length);
    this.rowSteps = new Uint32Array(model.buckets);
    this.dense = [model.b1, model.w2, model.b2, ...(model.proj ? [model.proj] : [])].map((param) => ({
      param,
      m: new Float32Array(param.length),
      v: new Float32Array(param.length),
    }));
  }

  step(
    rows: Map<number, Float32Array>,
    gB1: Float32Array,
    gW2: Float32Array,
    gB2: Float32Array,
    gProj?: Float32Array,
  ): void {
    this.step_ += 1;
    const grads = [gB1, gW2, gB2, ...(gProj ? [gProj] : [])];
    this.dense.forEach(({ param, m, v }, i) => {
      this.update(param, m, v, grads[i] as Float32Array, 0, this.step_);
    });
    const { dims } = this.model;
    for (const [row, grad] of rows) {
      const t = (this.rowSteps[row] ?? 0) + 1;
      this.rowSteps[row] = t;
      this.update(this.model.table, this.tableM, this.tableV, grad, row * dims, t);
    }
  }

  private update(
    param: Float32Array,
    m: Float32Array,
    v: Float32Array,
    grad: Float32Array,
    offset: number,
    t: number,
  ) {
    const c1 = 1 - this.beta1 ** t;
    const c2 = 1 - this.beta2 ** t;
    for (let i = 0; i < grad.length; i++) {
      const g = grad[i] ?? 0;
      const j = offset + i;
      const mj = this.beta1 * (m[j] ?? 0) + (1 - this.beta1) * g;
      const vj = this.beta2 * (v[j] ?? 0) + (1 - this.beta2) * g * g;
      m[j] = mj;
      v[j] = vj;
      param[j] = (param[j] ?? 0) - (this.lr * (mj / c1)) / (Math.sqrt(vj / c2) + this.eps);
    }
  }
}

function softmax(logits: Float32Array): Float32Array {
  let max = Number.NEGATIVE_INFINITY;
  for (const z of logits) max = Math.max(max, z);
  const out = logits.map((z) => Math.exp(z - max));
  const sum = out.reduce((a, b) => a + b, 0);
  return out.map((e) => e / sum);
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** Small seeded PRNG so training runs are reproducible. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(values: T[], random: () => number): void {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j] as T, values[i] as T];
  }
}
