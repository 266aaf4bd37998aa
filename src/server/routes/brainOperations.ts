// The context brain's operation names (the spec's, for the /api/me family; its verbs and their
// additive ones for /api/v1) and one line each: what the OpenAPI document, discover and the
// reference pages call them. completeRoute.ts applies them to the brain's routes by method and path.
export const BRAIN_OPERATIONS: Record<string, { id: string; verb?: string; summary: string }> = {
  "GET /api/me/ideation": {
    id: "listIdeationNotes",
    summary: "Whether the brain can explore, and recent ideation notes.",
  },
  "POST /api/me/ideation": { id: "createIdeationNote", summary: "Grow a new note from an optional seed." },
  "GET /api/me/files/:id/ideation": { id: "getFileIdeation", summary: "A note's ideation metadata." },
  "POST /api/me/files/:id/ideate": { id: "growIdeationNote", summary: "Grow an existing note (owner only)." },
  "GET /api/me/context": {
    id: "getWorkspaceContext",
    summary: "Workspace metadata and organisation coverage.",
  },
  "POST /api/me/context": {
    id: "analyzeWorkspaceContext",
    summary: "Reviewable proposals for context, tags, folders, connections.",
  },
  "POST /api/v1/ideation": {
    id: "ideate",
    verb: "ideate",
    summary:
      "Grow a new note from `{seed}` (or from what the workspace lacks): note, folder, tags, connections.",
  },
  "POST /api/v1/files/:id/ideate": {
    id: "grow",
    verb: "grow",
    summary: "Grow an existing note (owner only; If-Match honoured).",
  },
  "GET /api/v1/files/:id/ideation": {
    id: "ideation",
    verb: "ideation",
    summary: "A note's ideation record (seed, model, sources).",
  },
  "GET /api/v1/context": {
    id: "context",
    verb: "context",
    summary: "Workspace metadata and organisation coverage (no model).",
  },
  "POST /api/v1/context": {
    id: "analyze",
    verb: "analyze",
    summary: "Reviewable proposals for context, tags, folders, connections.",
  },
  "GET /api/v1/context/proposals": {
    id: "proposals",
    verb: "proposals",
    summary: "Stored proposals (`status=pending|accepted|rejected`).",
  },
  "POST /api/v1/context/proposals/:id/accept": {
    id: "proposalAccept",
    verb: "proposal-accept",
    summary: "Apply a proposal as your own edit.",
  },
  "POST /api/v1/context/proposals/:id/reject": {
    id: "proposalReject",
    verb: "proposal-reject",
    summary: "Reject a proposal.",
  },
  "POST /api/v1/context/proposals/review": {
    id: "proposalsReview",
    verb: "proposals-review",
    summary: "Accept and reject many at once.",
  },
  "PUT /api/v1/folders/:id/ai": {
    id: "folderAi",
    verb: "folder-ai",
    summary: "Keep a folder (and below) away from the AI: `{excluded}`.",
  },
  "POST /api/v1/transcriptions": {
    id: "scan",
    verb: "scan",
    summary: "A voice memo or a photo of a page (raw or multipart) becomes a note.",
  },
  "GET /api/v1/transcriptions": {
    id: "transcriptions",
    verb: "transcriptions",
    summary: "Transcription records.",
  },
  "POST /api/v1/artifacts": {
    id: "render",
    verb: "render",
    summary: "Render notes into a summary, outline, slides, Mermaid diagram or HTML.",
  },
  "GET /api/v1/artifacts/models": {
    id: "models",
    verb: "models",
    summary: "Artifact kinds and the provider models that make them.",
  },
  "GET /api/v1/artifacts": { id: "artifacts", verb: "artifacts", summary: "Artifact records (no content)." },
  "GET /api/v1/search": {
    id: "search",
    verb: "search",
    summary: "Ranked full-text search with snippets (`q`, extension of the spec).",
  },
};
