"""The API's reference pages, Swagger UI and Redoc: for signed-in users, as the schema they show.

The schema (``/api/schema/``) is for API clients and, as every endpoint but the token's, answers
an anonymous request 401 (``SERVE_PERMISSIONS`` in the settings). These two are pages a person
opens in a browser, so an anonymous visitor is sent to the sign-in page and back, as every
dashboard page does, rather than shown a bare 401. Signed in with a session or a token, both
answer 200.
"""

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView
from rest_framework.exceptions import NotAuthenticated


class _SignInFirst:
    def handle_exception(self, exc):
        if isinstance(exc, NotAuthenticated):  # no credentials at all; a bad token stays a 401
            return redirect_to_login(self.request.get_full_path())
        return super().handle_exception(exc)


class SwaggerView(_SignInFirst, SpectacularSwaggerView):
    pass


class RedocView(_SignInFirst, SpectacularRedocView):
    pass
