from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from dashboard import health


@require_GET
@never_cache
def healthz(request):
    """200 when the database, Redis and at least one Celery worker answer, 503 otherwise."""
    report = health.health_report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)
