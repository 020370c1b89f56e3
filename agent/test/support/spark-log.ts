/**
 * Generated Spark event logs for the Optimus tests: SQL executions whose plans hold file scans
 * (`Scan parquet <table>` with a `Location`, filters and a bytes-read metric), written as Spark
 * writes them, one JSON event a line.
 *
 * @example await writeFile(join(dir, "app-1"), sparkLog([{ id: 1, time: Date.now(), description: "q", bytes: 10, scans: [scanNode("db.t", "s3://b/t")] }]));
 */

export interface GeneratedExecution {
  id: number;
  /** Start time in ms; absent: the start event carries none. */
  time?: number;
  description: string;
  /** Bytes read, spread evenly over the scans' metrics. */
  bytes: number;
  scans: object[];
}

/** The log's text: a start, the bytes-read updates and an end per execution. */
export function sparkLog(executions: GeneratedExecution[]): string {
  const ui = "org.apache.spark.sql.execution.ui.";
  const events: object[] = [{ Event: "SparkListenerLogStart", "Spark Version": "3.5.1" }];
  for (const e of executions) {
    const children = e.scans.map((scan, i) => ({
      ...scan,
      children: [],
      metrics: [{ name: "size of files read", accumulatorId: e.id * 100 + i }],
    }));
    events.push(
      {
        Event: `${ui}SparkListenerSQLExecutionStart`,
        executionId: e.id,
        description: e.description,
        ...(e.time === undefined ? {} : { time: e.time }),
        sparkPlanInfo: { nodeName: "HashAggregate", children },
      },
      {
        Event: `${ui}SparkListenerDriverAccumUpdates`,
        executionId: e.id,
        accumUpdates: children.map((_, i) => [e.id * 100 + i, e.bytes / children.length]),
      },
      { Event: `${ui}SparkListenerSQLExecutionEnd`, executionId: e.id, time: (e.time ?? 0) + 500 },
    );
  }
  return `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
}

/** A file scan node of `table` at `location`, with Catalyst partition and data filters (`[...]`). */
export function scanNode(
  table: string,
  location: string,
  filters: { partition?: string; data?: string } = {},
) {
  return {
    nodeName: `Scan parquet ${table}`,
    metadata: {
      Location: `InMemoryFileIndex(1 paths)[${location}]`,
      PartitionFilters: filters.partition ?? "[]",
      DataFilters: filters.data ?? "[]",
      ReadSchema: "struct<region:string,amount:int>",
    },
  };
}
