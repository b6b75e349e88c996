# The row issues and stored rewrites move from the scoring app with their tables as they are: only
# Django's record of who owns them changes (scoring's 0003 lets go of them after this one takes them).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('catalog', '0005_unreadable_pairwise_answers'),
        ('jobs', '0003_unified_pipeline'),
        ('scoring', '0002_response_variant_filters'),  # the tables exist
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='DerivedText',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('purpose', models.CharField(max_length=40)),
                        ('provider', models.CharField(max_length=500)),
                        ('prompt_version', models.CharField(max_length=100)),
                        ('source_sha256', models.CharField(max_length=64)),
                        ('text', models.TextField()),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'scoring_derivedtext',
                        'constraints': [models.UniqueConstraint(fields=('purpose', 'provider', 'prompt_version', 'source_sha256'), name='one_derived_text_per_source')],
                    },
                ),
                migrations.CreateModel(
                    name='RowIssue',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('label', models.CharField(blank=True, help_text='The variant, metric or judge it concerns.', max_length=100)),
                        ('stage', models.CharField(max_length=30)),
                        ('message', models.CharField(max_length=1000)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='row_issues', to='jobs.job')),
                        ('prompt', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.prompt')),
                        ('response', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.response')),
                    ],
                    options={
                        'db_table': 'scoring_rowissue',
                        'ordering': ['id'],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
