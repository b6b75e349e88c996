"""A job's state and results are its runner's and its operations': the admin shows them and lets a
person rename the job, nothing more (a form there could mark a failed job succeeded or type a result)."""

from __future__ import annotations

import pytest

from evalhub.jobs.models import Job, JobStatus
from tests.admin_forms import edited_in_admin
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_the_admin_renames_a_job_and_changes_nothing_it_computed(client):
    client.force_login(make_user("root-admin", "admin", superuser=True))
    job = Job.objects.create(kind="gem", title="GEM", status=JobStatus.FAILED, result={"scores": [0.1]})
    edited_in_admin(
        client,
        f"/admin/jobs/job/{job.pk}/change/",
        title="GEM, first try",
        status="succeeded",
        result='{"scores": [9]}',
    )
    job.refresh_from_db()
    assert (job.title, job.status, job.result) == ("GEM, first try", JobStatus.FAILED, {"scores": [0.1]})
