/** The job kinds of the platform, each declared beside its domain; the registry refuses a kind listed twice. */
import { catalogSyncKind, catalogTestKind } from "./catalog-connections/kinds.ts";
import { crunchKind, optimizeKind } from "./crunch/kind.ts";
import { noopKind, sleepKind } from "./jobs/diagnostic.ts";
import type { JobKind } from "./jobs/kinds.ts";
import { convertKind, prefixHardDeleteKind, removeInputsKind } from "./object-maintenance/conversion/kind.ts";
import { discoveryKind } from "./object-maintenance/discovery/kind.ts";
import { onboardingKind } from "./onboarding/kind.ts";
import { opportunityScanKind } from "./opportunities/kind.ts";
import { queryLogAnalysisKind } from "./optimus/kind.ts";
import { layoutScoringKind } from "./optimus/scoring-kind.ts";
import { partitionExpirationKind } from "./partition-expiration/kind.ts";
import { hardDeleteKind, recoverKind } from "./pending-deletions/kinds.ts";
import { vacuumKind } from "./vacuum/kind.ts";

export const PLATFORM_JOB_KINDS: readonly JobKind<unknown>[] = [
  onboardingKind,
  crunchKind,
  optimizeKind,
  vacuumKind,
  partitionExpirationKind,
  recoverKind,
  hardDeleteKind,
  catalogTestKind,
  catalogSyncKind,
  discoveryKind,
  convertKind,
  removeInputsKind,
  prefixHardDeleteKind,
  opportunityScanKind,
  queryLogAnalysisKind,
  layoutScoringKind,
  noopKind,
  sleepKind,
];
