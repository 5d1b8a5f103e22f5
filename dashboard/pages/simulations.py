"""/simulations/: trace replay arrives in a later issue; the page says so."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
@login_required
def simulation_list(request):
    return render(request, "dashboard/simulations.html")
