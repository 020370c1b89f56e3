/**
 * The files the docs pages load (Swagger UI and Redoc bundles), served by the control plane itself
 * so `/docs` and `/redoc` work without internet. Each runtime supplies its own loader.
 */
export const DOCS_ASSET_NAMES = ["swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"] as const;
export type DocsAssetName = (typeof DOCS_ASSET_NAMES)[number];

export interface DocsAssets {
  /** The asset's bytes, or null when this installation does not ship it. */
  get(name: DocsAssetName): Promise<ArrayBuffer | string | null>;
}
