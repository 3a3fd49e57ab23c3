document.getElementById("greeting").textContent = "It works.";
