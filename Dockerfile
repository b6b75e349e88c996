# One image for web, worker and gpu-worker.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 EVALHUB_DATA_DIR=/data EVALHUB_STATIC_ROOT=/app/staticfiles
WORKDIR /app
COPY requirements.txt requirements-no-deps.txt ./
RUN pip install -r requirements.txt && pip install --no-deps -r requirements-no-deps.txt
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput -v 0
EXPOSE 8000
CMD ["uvicorn", "evalhub.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers"]
