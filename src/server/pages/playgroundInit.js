// The playground: Swagger UI (served by this server, no CDN) over /openapi.json. A pasted key goes
// in "Authorize"; a signed-in browser (the key page's session) can mint a one-hour key here.
/* global SwaggerUIBundle */
const ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  tryItOutEnabled: true,
  persistAuthorization: true,
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  docExpansion: "list",
  filter: true,
  validatorUrl: null,
});
window.ui = ui;

const status = document.getElementById("session-status");
const button = document.getElementById("use-session");
fetch("/api/me/session", { credentials: "same-origin" })
  .then(async (res) => {
    if (!res.ok) {
      status.textContent =
        "Paste an API key under Authorize, or sign in on the key page (or run txtfs open playground) to try with your account.";
      return;
    }
    const session = await res.json();
    status.textContent = `Signed in as ${session.user.email}.`;
    button.hidden = false;
    button.onclick = async () => {
      button.disabled = true;
      const minted = await fetch("/api/me/keys", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "x-csrf-token": session.csrfToken },
        body: JSON.stringify({
          label: "playground",
          expiresIn: 3600,
          scopes: [
            "files:read",
            "files:write",
            "folders:read",
            "folders:write",
            "collaboration:read",
            "collaboration:write",
            "shares:read",
            "shares:write",
          ],
        }),
      });
      if (!minted.ok) {
        status.textContent = `Could not mint a key: ${(await minted.json()).error?.message ?? minted.status}`;
        button.disabled = false;
        return;
      }
      const { secret } = await minted.json();
      ui.preauthorizeApiKey("apiKey", secret);
      status.textContent = `Signed in as ${session.user.email}; a one-hour playground key is authorized (revoke it on the key page).`;
    };
  })
  .catch(() => {});
