# Only Django's record changes: the tables now belong to the worklog app (its 0001), unchanged.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0002_response_variant_filters"),
        ("worklog", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="DerivedText"),
                migrations.DeleteModel(name="RowIssue"),
            ],
            database_operations=[],
        ),
    ]
