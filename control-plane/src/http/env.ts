/** The Hono environment shared by every router of the control plane. */
import type { Principal } from "../auth/access.ts";
import type { Services } from "../services.ts";

export type AppEnv = {
  Variables: {
    services: Services;
    /** Set by the guard for every non-public route. */
    principal: Principal;
  };
};
