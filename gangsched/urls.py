from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from dashboard import login, metrics, views
from dashboard.api import docs

# Every app's admin.py, registering its ModelAdmins before /admin/ is routed: not done when Django
# starts (gangsched/app_configs.py), so a command that serves no page does not import them.
admin.autodiscover()

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),  # Prometheus; token or address allowlist
    path("admin/", admin.site.urls),
    path("accounts/login/", login.LoginView.as_view(), name="login"),  # with a failure limit
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("dashboard.api.urls")),
    # Signed-in users only: the schema answers 401, its viewers send to the sign-in page.
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", docs.SwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", docs.RedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("", include("dashboard.pages.urls")),
]

# Unmatched paths under /api/ get the API's JSON error body; the rest, Django's page.
handler404 = "dashboard.api.exceptions.not_found"
