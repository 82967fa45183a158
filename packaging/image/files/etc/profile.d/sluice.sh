# sluicectl in the appliance talks to the local API over its HTTPS listener
export SLUICE_URL=https://127.0.0.1:8080
