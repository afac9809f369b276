"""Token sign-in for wac's local web apps (the review app, the human-auditor app): one implementation.

A user signs in with a name and the token `add-reviewer` / `add-participant` printed; the token is
kept in an HttpOnly, SameSite=Strict cookie (scripts may send `Authorization: Bearer TOKEN`).  Every
write must also carry the app's write header, which a cross-site page cannot send without a
preflight the apps never grant; a cross-site sign-in form is refused.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from wac.errors import AuthError

COOKIE_DAYS = 30


class TokenSignIn:
    """Mixin for an app with `store.authenticate(token)` and `templates` (a `signin.html` taking
    `error` and `name`); `cookie`, `write_header` and `who` (for messages) name the app's own."""

    cookie: str
    write_header: str
    who: str  # "reviewer", "participant"

    def token(self, request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.cookies.get(self.cookie)

    def signed_in(self, request: Request):
        """The user holding the request's token, or None."""
        try:
            return self.store.authenticate(self.token(request))
        except AuthError:
            return None

    def writer(self, request: Request):
        """The user of a write request; AuthError unless its token and write header are right."""
        user = self.store.authenticate(self.token(request))
        bearer = request.headers.get("authorization", "").lower().startswith("bearer ")
        if not bearer and request.headers.get(self.write_header) != "1":
            raise AuthError(f"writes must carry the {self.write_header} header")
        return user

    async def signin_page(self, request: Request):
        return self.templates.TemplateResponse(request, "signin.html", {"error": None, "name": ""})

    async def signin(self, request: Request):
        form = await request.form()
        name, token = str(form.get("name", "")).strip(), str(form.get("token", "")).strip()
        origin = request.headers.get("origin")
        if origin and origin.split("://", 1)[-1] != request.headers.get("host"):
            return Response("cross-site sign-in refused", status_code=403)
        try:
            user = self.store.authenticate(token)
        except AuthError:
            user = None
        if user is None or user.name != name:
            ctx = {"error": f"That name and token do not match a {self.who}.", "name": name}
            return self.templates.TemplateResponse(request, "signin.html", ctx, status_code=401)
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(self.cookie, token, httponly=True, samesite="strict", max_age=COOKIE_DAYS * 24 * 3600)
        return resp

    async def signout(self, request: Request):
        resp = RedirectResponse("/signin", status_code=303)
        resp.delete_cookie(self.cookie)
        return resp
