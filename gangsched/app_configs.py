"""Two installed apps configured so that starting Django does only what every process needs.

Every ``manage.py`` command starts Django, ``manage.py get gangs`` too; what an app's config
imports or runs when Django starts, each of them pays for (bench/cli_time.py measures a read).

``DaphneConfig``: daphne, for its ``manage.py runserver``, which replaces Django's and serves
websockets too. ``daphne.apps`` imports ``daphne.server`` at module level (Twisted and autobahn,
about half a second) so that its reactor is installed before anything else imports Twisted's.
Listed as this class, the app is the same ``daphne`` app with the same label and commands;
``daphne.server`` is imported by its ``runserver`` command alone, before that installs the
reactor. (Its system check that daphne comes before ``django.contrib.staticfiles`` is left out:
``INSTALLED_APPS`` lists it first.)

``AdminConfig``: the Django admin without importing every app's ``admin.py`` when Django
starts. dashboard/admin.py imports the operator actions, the services and through them the
engine and numpy. The admin modules are imported by gangsched/urls.py before it routes
``/admin/`` (the first request of a web process, or a test's), and by the admin's system check
before it checks them, so ``manage.py check`` still checks every ModelAdmin.
"""

from django.apps import AppConfig
from django.contrib import admin
from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks


class DaphneConfig(AppConfig):
    name = "daphne"
    verbose_name = "Daphne"


class AdminConfig(SimpleAdminConfig):
    def ready(self) -> None:
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_registered_admins, checks.Tags.admin)


def check_registered_admins(app_configs, **kwargs):
    """Django's check of the registered ModelAdmins, once they are registered."""
    admin.autodiscover()
    return check_admin_app(app_configs, **kwargs)
