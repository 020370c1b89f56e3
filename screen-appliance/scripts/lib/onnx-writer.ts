/**
 * Serialises a trained hashed-bag MLP to an ONNX model (opset 13) with the generated protobuf
 * classes of `onnx-proto`. The graph:
 *
 *   rows:int32[N,W] -> Gather(table_f16) -> Cast(float) -> ReduceSum(axis 1) -> Mul(scale:float[N,1])
 *     -> Add(b1) -> Relu -> MatMul(w2) -> Add(b2) -> Softmax | Sigmoid -> probs:float[N,C]
 *
 * Padding uses row 0 of the table, which training keeps at zero, so a padded slot adds nothing.
 * The table is stored, and kept in memory, as float16 (`table_f16`, half the bytes); only the
 * gathered rows are cast to float, exactly, so the sums are those of the float32 table. The table
 * must hold float16 numbers already (lib/float16.ts, `roundToFloat16`), so the file is exactly the
 * model training measured.
 */
import onnxProto from "onnx-proto";
import type { BagMlp } from "./bag-mlp.ts";
import { exactFloat16 } from "./float16.ts";

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;
const INT32 = onnx.TensorProto.DataType.INT32;
const INT64 = onnx.TensorProto.DataType.INT64;

function floatTensor(name: string, dims: number[], values: Float32Array) {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: bytes });
}

function float16Tensor(name: string, dims: number[], values: Float32Array) {
  const half = exactFloat16(values);
  const bytes = new Uint8Array(half.buffer, half.byteOffset, half.byteLength);
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT16, rawData: bytes });
}

function valueInfo(name: string, elemType: number, dims: (number | string)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: {
          dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })),
        },
      },
    },
  });
}

export function toOnnx(model: BagMlp, output: "softmax" | "sigmoid", docString: string): Uint8Array {
  const { buckets, dims, classes } = model;
  const node = (opType: string, input: string[], out: string, attribute: object[] = []) =>
    onnx.NodeProto.create({ opType, input, output: [out], name: out, attribute });
  const graph = onnx.GraphProto.create({
    name: "hashed_bag_mlp",
    node: [
      node("Gather", ["table_f16", "rows"], "gathered_f16", [{ name: "axis", i: 0, type: 2 }]),
      node("Cast", ["gathered_f16"], "gathered", [{ name: "to", i: FLOAT, type: 2 }]),
      node("ReduceSum", ["gathered", "bag_axis"], "bag", [{ name: "keepdims", i: 0, type: 2 }]),
      node("Mul", ["bag", "scale"], "scaled"),
      node("Add", ["scaled", "b1"], "hidden_pre"),
      node("Relu", ["hidden_pre"], "hidden"),
      node("MatMul", ["hidden", "w2"], "logits_pre"),
      node("Add", ["logits_pre", "b2"], "logits"),
      output === "softmax"
        ? node("Softmax", ["logits"], "probs", [{ name: "axis", i: -1, type: 2 }])
        : node("Sigmoid", ["logits"], "probs"),
    ],
    initializer: [
      float16Tensor("table_f16", [buckets, dims], model.table),
      floatTensor("b1", [dims], model.b1),
      floatTensor("w2", [dims, classes], model.w2),
      floatTensor("b2", [classes], model.b2),
      onnx.TensorProto.create({ name: "bag_axis", dims: [1], dataType: INT64, int64Data: [1] }),
    ],
    input: [valueInfo("rows", INT32, ["N", "W"]), valueInfo("scale", FLOAT, ["N", 1])],
    output: [valueInfo("probs", FLOAT, ["N", classes])],
  });
  const modelProto = onnx.ModelProto.create({
    irVersion: 7,
    producerName: "lakesmith-screen-appliance",
    producerVersion: "0.1.0",
    docString,
    opsetImport: [{ domain: "", version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(modelProto).finish();
}
